// Pins, byte for byte, the strings a model or a trainer reads that the seeds spell out (issue 40, item 1):
// the observation truncation line and the URL cap [000 §1.8, §1.4], the page info [001 §3.5], the action's
// `action_nl_description` and the step summary's arguments [003 §4.3], the desktop agent's unknown-tool and
// tool-error observations [004 §1.6, §1.8].
import { describe, expect, it } from 'vitest';

import { pythonJson } from '../../src/actions/describe';
import { decisionFields } from '../../src/agent/decision';
import { describeViewport } from '../../src/browser/pageContext';
import { checkCall, memoryLines } from '../../src/desktop/agent';
import type { Completion } from '../../src/model/client';
import { composeStepText, trimUrlForPrompt, truncateObservation } from '../../src/model/context';
import { actionEvent, preObservation, taskMessage, toolOutput } from '../../src/trajectory/events';
import type { Event } from '../../src/trajectory/schema';
import { stepSummaries } from '../../src/trajectory/steps';

const COMPLETION: Completion = {
  text: 'x',
  reasoning: null,
  finishReason: 'stop',
  usage: { prompt_tokens: 1, completion_tokens: 1, reasoning_tokens: 0 },
};
const FAMILY = { name: 'fara-1.5', allowedActions: ['left_click', 'type'] } as const;

describe('[000 §1.8] the middle truncation of a text observation', () => {
  it('keeps both halves around "... [truncated N chars] ..."', () => {
    const text = `${'a'.repeat(600)}${'b'.repeat(500)}${'c'.repeat(600)}`;
    expect(truncateObservation(text)).toBe(`${'a'.repeat(500)}\n... [truncated 700 chars] ...\n${'c'.repeat(500)}`);
  });
});

describe('[000 §1.4] the URL line', () => {
  it('cuts the query, then caps at 100 characters with nothing past the cap', () => {
    const path = `https://example.com/${'p'.repeat(150)}`;
    expect(trimUrlForPrompt(`${path}?utm_source=x`)).toBe(path.slice(0, 100));
    expect(composeStepText({ url: `${path}?q=1` }, { nudge: 'N' })).toBe(`Current URL: ${path.slice(0, 100)}\nN`);
  });
});

describe('[001 §3.5] the page info', () => {
  it('writes the pixels as "(0-900px of 2612px)"', () => {
    const info = describeViewport('https://www.bing.com/search?q=weather', {
      top: 0,
      height: 900,
      scrollHeight: 2612,
      left: 0,
      width: 1440,
    });
    expect(info).toBe(
      'Current URL: https://www.bing.com/search?q=weather\nViewport: scrolled to 34% of page (0-900px of 2612px)',
    );
  });
});

describe('[003 §4.3] action_nl_description and the step summary', () => {
  it('is the thoughts, a newline and name(args) with the args as Python json.dumps writes them', () => {
    const fields = decisionFields({
      action: { action: 'type', text: 'café', coordinate: [500, 120], press_enter: true },
      thoughts: 'I type the name.',
      family: FAMILY,
      facts: [],
      completion: COMPLETION,
    });
    expect(fields.action_nl_description).toBe(
      'I type the name.\ntype({"text": "caf\\u00e9", "coordinate": [500, 120], "press_enter": true})',
    );
  });

  it('is name(args) alone when there are no thoughts', () => {
    const fields = decisionFields({
      action: { action: 'left_click', coordinate: [10, 20] },
      thoughts: '',
      family: FAMILY,
      facts: [],
      completion: COMPLETION,
    });
    expect(fields.action_nl_description).toBe('left_click({"coordinate": [10, 20]})');
  });

  it('writes values as Python does', () => {
    expect(pythonJson({ a: [1, 2.5, null, false], b: 'x"\n/ü😀' })).toBe(
      '{"a": [1, 2.5, null, false], "b": "x\\"\\n/\\u00fc\\ud83d\\ude00"}',
    );
  });

  it('gives each step summary the action arguments, without the thoughts', () => {
    const events: Event[] = [
      taskMessage('go'),
      preObservation(1, { screenshot_path: 'screenshot_1_pre.png' }),
      actionEvent(1, {
        action_name: 'left_click',
        content: { action: 'left_click', arguments: { coordinate: [500, 120], thoughts: 'Click.' } },
      }),
    ];
    expect(stepSummaries(events)[0]?.arguments).toEqual({ coordinate: [500, 120] });
  });
});

describe('[004 §1.6, §1.8] the desktop agent answers a call', () => {
  const callEvents = (name: string, output: string, error: string): Event[] => [
    taskMessage('Save notes'),
    preObservation(1, { screenshot_path: 'screenshot_1_pre.png' }),
    { ...actionEvent(1, { action_name: name, content: { action: name, arguments: {} } }), id: 'a1' },
    toolOutput(1, 'a1', { output, error }),
  ];
  const observation = (events: Event[]) =>
    memoryLines(events, { objective: 'Save notes' }).find((l) => l.startsWith('OBSERVATION:'));

  it('with "Function not implemented." for an unknown tool', () => {
    const error = checkCall('fly', {}).error ?? '';
    expect(error).toBe('Function not implemented.');
    expect(observation(callEvents('fly', '', error))).toBe('OBSERVATION: Function not implemented.');
  });

  it('with "Error executing function: …" for a failed call', () => {
    expect(observation(callEvents('run_command', '', 'exit 1'))).toBe('OBSERVATION: Error executing function: exit 1');
  });
});
