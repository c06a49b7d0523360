// Specification of the worker's start lines listing each hosted environment's actions or tools.
import { describe, expect, it } from 'vitest';
import { toolListLines } from '../../worker/tool-lists';

const FARA15 =
  'browser actions (fara-1.5, 18): key, type, mouse_move, left_click, left_click_drag, right_click, double_click, ' +
  'triple_click, scroll, hscroll, visit_url, history_back, web_search, read_page_answer_question, ' +
  'pause_and_memorize_fact, ask_user_question, wait, terminate';
const FARA7B =
  'browser actions (fara-7b, 11): key, type, mouse_move, left_click, scroll, visit_url, web_search, history_back, ' +
  'pause_and_memorize_fact, wait, terminate';
const OPENAI =
  'browser actions (openai-computer, 14): key, type, mouse_move, left_click, left_click_drag, right_click, ' +
  'double_click, scroll, hscroll, visit_url, history_back, wait, ask_user_question, terminate';
const ANTHROPIC =
  'browser actions (anthropic-computer, 15): key, type, mouse_move, left_click, left_click_drag, right_click, ' +
  'double_click, triple_click, scroll, hscroll, visit_url, history_back, wait, ask_user_question, terminate';
const GEMINI =
  'browser actions (gemini-computer, 15): key, type, mouse_move, left_click, left_click_drag, right_click, ' +
  'double_click, triple_click, scroll, hscroll, visit_url, history_back, wait, ask_user_question, terminate';
const UI_TARS =
  'browser actions (ui-tars-1.5, 12): key, type, mouse_move, left_click, left_click_drag, right_click, ' +
  'double_click, scroll, hscroll, wait, ask_user_question, terminate';
const QWEN =
  'browser actions (qwen-vl, 13): key, type, mouse_move, left_click, left_click_drag, right_click, double_click, ' +
  'triple_click, scroll, hscroll, wait, ask_user_question, terminate';
const DESKTOP =
  'desktop tools (10): stop, run_command, run_background_command, send_key, type_text, click, double_click, ' +
  'right_click, drag, ask_user';

describe('toolListLines', () => {
  it.each<[string, Parameters<typeof toolListLines>[0], string[]]>([
    ['browser only', { desktop: false, environments: [] }, [FARA15, FARA7B, OPENAI, ANTHROPIC, GEMINI, UI_TARS, QWEN]],
    [
      'browser and desktop',
      { desktop: true, environments: [] },
      [FARA15, FARA7B, OPENAI, ANTHROPIC, GEMINI, UI_TARS, QWEN, DESKTOP],
    ],
    [
      'with environments of the application',
      { desktop: true, environments: ['raw-page', 'vnc'] },
      [
        FARA15,
        FARA7B,
        OPENAI,
        ANTHROPIC,
        GEMINI,
        UI_TARS,
        QWEN,
        DESKTOP,
        "environments beside the browser: raw-page, vnc (each takes the browser actions of the task's family)",
      ],
    ],
  ])('%s', (_case, hosted, lines) => {
    expect(toolListLines(hosted)).toEqual(lines);
  });

  it('prints one line per environment, none of them wrapped', () => {
    for (const line of toolListLines({ desktop: true, environments: ['x'] })) expect(line).not.toContain('\n');
  });
});
