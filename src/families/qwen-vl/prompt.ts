// The system prompt of a qwen-vl step: a short statement of the job in our words, then the `computer_use` function
// (Qwen-Agent's schema: one function whose flat arguments are told apart by `action`) in the function-calling
// section of Qwen's chat template (`# Tools`, `<tools>` … `</tools>`, the `<tool_call>` form), written into the
// system message by hand as Qwen's cookbooks do, so the model's calls arrive as text with or without a vLLM tool
// parser. The action list is the generation's (Qwen3-VL adds triple_click, hscroll and answer); middle_click, which
// both generations know, is left out: we have no such action. The screen's resolution is the resized screenshot's
// size for Qwen2.5-VL (it points in its pixels) and the grid for Qwen3-VL.
import type { QwenGeneration, QwenSpace } from './settings';

export const COMPUTER_USE = 'computer_use';

/** Qwen's names of the actions each generation is offered, in the order the schema lists them. */
export const QWEN_ACTIONS: Record<QwenGeneration, readonly string[]> = {
  '2.5': [
    'key', 'type', 'mouse_move', 'left_click', 'left_click_drag', 'right_click', 'double_click', 'scroll', 'wait',
    'terminate',
  ],
  '3': [
    'key', 'type', 'mouse_move', 'left_click', 'left_click_drag', 'right_click', 'double_click', 'triple_click',
    'scroll', 'hscroll', 'wait', 'terminate', 'answer',
  ],
}; // prettier-ignore

const ACTION_LINES: Record<string, string> = {
  key: 'press keys: they go down in the order given and come up in reverse (a combination such as ["ctrl", "a"])',
  type: 'type a string of text with the keyboard into the focused element',
  mouse_move: 'move the cursor to `coordinate`',
  left_click: 'click the left mouse button at `coordinate`',
  left_click_drag: 'hold the left mouse button down at the cursor and drag it to `coordinate`',
  right_click: 'click the right mouse button at `coordinate`',
  double_click: 'double-click the left mouse button at `coordinate`',
  triple_click: 'triple-click the left mouse button at `coordinate` (selects a line or a field)',
  scroll: 'turn the mouse wheel by `pixels`: positive scrolls up, negative scrolls down',
  hscroll: 'scroll sideways by `pixels`: positive scrolls left, negative scrolls right',
  wait: 'wait `time` seconds for the page to change',
  terminate: 'end the task and report whether it succeeded (`status`)',
  answer: "end the task with the answer to the person's question (`text`)",
};

/** Which actions use an argument, as the schema says it ("Required only by `action=key`."). */
function usedBy(actions: readonly string[], users: readonly string[]): string {
  const names = users.filter((a) => actions.includes(a)).map((a) => `\`action=${a}\``);
  return `Required only by ${names.join(' and ')}.`;
}

/** The `computer_use` function as the model is shown it, for the generation and its coordinate space. */
export function computerUseFunction(space: QwenSpace): Record<string, unknown> {
  const actions = QWEN_ACTIONS[space.generation];
  const point =
    space.generation === '2.5'
      ? '(x, y): pixels from the left and top edges of the screenshot.'
      : `(x, y): a point on the ${space.width}x${space.height} grid over the screen, (0, 0) at the top left.`;
  const description = [
    'Use a mouse and keyboard to interact with a computer, and take screenshots.',
    '* This is an interface to a web browser showing one page; you see a screenshot after every action.',
    '* Pages may take time to load or change: wait and look at the next screenshot before acting again.',
    `* The screen's resolution is ${space.width}x${space.height}.`,
    '* Before you click, find the element in the latest screenshot and aim at its centre, not its edges.',
  ].join('\n');
  const parameters: Record<string, unknown> = {
    properties: {
      action: {
        description: ['The action to perform:', ...actions.map((a) => `* \`${a}\`: ${ACTION_LINES[a] ?? a}.`)].join(
          '\n',
        ),
        enum: [...actions],
        type: 'string',
      },
      keys: { description: usedBy(actions, ['key']), type: 'array' },
      text: { description: usedBy(actions, ['type', 'answer']), type: 'string' },
      coordinate: { description: point, type: 'array' },
      pixels: { description: 'How far to scroll. ' + usedBy(actions, ['scroll', 'hscroll']), type: 'number' },
      time: { description: 'Seconds. ' + usedBy(actions, ['wait']), type: 'number' },
      status: { description: usedBy(actions, ['terminate']), type: 'string', enum: ['success', 'failure'] },
    },
    required: ['action'],
    type: 'object',
  };
  return { type: 'function', function: { name: COMPUTER_USE, description, parameters } };
}

/**
 * JSON as Python's json.dumps writes it by default (", " and ": " between items, non-ASCII escaped), the form
 * Qwen's chat template puts the tools in.
 */
export function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const items = Object.entries(value as Record<string, unknown>).map(
      ([k, v]) => `${pythonJson(k)}: ${pythonJson(v)}`,
    );
    return `{${items.join(', ')}}`;
  }
  if (typeof value === 'string') {
    return JSON.stringify(value).replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  }
  return JSON.stringify(value) ?? 'null';
}

/** What the model does, asks and ends with, in our words (before the function-calling section). */
function jobOf(generation: QwenGeneration): string {
  const end =
    generation === '3'
      ? 'When the task is done, call terminate with its status; when it asked for information, call answer with it.'
      : 'When the task is done, say the result in a sentence, then call terminate with its status.';
  return [
    'You are a helpful assistant operating a web browser to carry out a task for a person.',
    'Each turn, say briefly what you see and what you will do, then call computer_use once.',
    'When you need something only the person can give (a choice, a login, personal details, a confirmation), write',
    'your question in plain text ending with a question mark and call no function; their reply comes next.',
    'Never make up personal data (names, addresses, phone numbers, email addresses, payment details): ask for it.',
    end,
  ].join(' ');
}

/** The whole system message of a step. */
export function qwenSystemPrompt(space: QwenSpace): string {
  return [
    jobOf(space.generation),
    '',
    '# Tools',
    '',
    'You may call one or more functions to assist with the user query.',
    '',
    'You are provided with function signatures within <tools></tools> XML tags:',
    '<tools>',
    pythonJson(computerUseFunction(space)),
    '</tools>',
    '',
    'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:',
    '<tool_call>',
    '{"name": <function-name>, "arguments": <args-json-object>}',
    '</tool_call>',
  ].join('\n');
}
