// What an action-model output that called no tool means. With native function calling a plain text output is the
// model's last word: its text is the task's answer and the task ends (the original's loop stops when a step brings
// no call). It is an invalid output instead when it has no words, when its words look like a call that could not be
// read (a broken JSON call, `click(…)`, a stray `</tool_call>`), or when the worker asks for every step to call a tool.
import { NO_TOOL_CALL_ERROR } from './parse';
import { DESKTOP_TOOL_NAMES, canonicalToolName, desktopTool } from './tools';

export type NoCallOutcome = { kind: 'final'; answer: string } | { kind: 'invalid'; error: string; errorType: string };

/** The instruction an empty output earns. */
export const EMPTY_OUTPUT_ERROR =
  `Your output was empty. Every step must call at least one of: ${DESKTOP_TOOL_NAMES.join(', ')}; ` +
  'if the task is finished, call stop with the final answer.';

const THINK_END = /<\/think\s*>/gi;
const THINK_START = /<think\s*>/i;
/** Tokens and tags models wrap calls in; an output holding one meant to call a tool. */
const CALL_MARKERS = /<\/?(?:tool_call|function_call|tool_use)\b|<function=|\[TOOL_CALLS\]|<\|tool_call|^\s*ACTION:/im;
/** A name written like a function call: `run_command(` or `computer.click(`. */
const CALL_SYNTAX = /(?<![\w.-])([A-Za-z_][\w.]*)\(/g;
/** A JSON-ish field naming the call or its arguments: `"name": "click"`, `'arguments':`, `"function":`. */
const NAME_FIELD = /["']?(?:name|tool|tool_name|function_name|function|action)["']?\s*:\s*["']([\w.-]+)["']/g;
const ARGUMENTS_FIELD = /["'](?:arguments|parameters)["']\s*:/;
const WRAPPERS = new Set(['computer', 'computer_use']);

function isToolName(written: string): boolean {
  const name = written.split('.').at(-1) ?? written;
  return desktopTool(canonicalToolName(name)) !== undefined || WRAPPERS.has(canonicalToolName(written));
}

/**
 * The output's words outside its reasoning: what follows the last `</think>` (or the whole text), up to a `<think>`
 * left open (reasoning cut short); trimmed.
 */
export function finalWords(text: string): string {
  let end = 0;
  for (const m of text.matchAll(THINK_END)) end = m.index + m[0].length;
  const rest = text.slice(end);
  const open = THINK_START.exec(rest);
  return (open ? rest.slice(0, open.index) : rest).trim();
}

/** What in these words looks like an attempted tool call (for the error the model reads), or undefined. */
export function attemptedCall(words: string): string | undefined {
  const marker = CALL_MARKERS.exec(words)?.[0];
  if (marker) return marker.trim();
  for (const m of words.matchAll(CALL_SYNTAX)) if (m[1] && isToolName(m[1])) return `${m[1]}(…)`;
  for (const m of words.matchAll(NAME_FIELD)) if (m[1] && isToolName(m[1])) return `a call of ${m[1]}`;
  if (ARGUMENTS_FIELD.test(words)) return 'an "arguments" field';
  return undefined;
}

/**
 * The outcome of an output in which no call was read: its text ends the task (`endOnNoCall`, the default), or it is
 * an invalid output the model is told about at the next step.
 */
export function noCallOutcome(text: string, endOnNoCall: boolean): NoCallOutcome {
  const words = finalWords(text);
  // 'EmptyReply': the error_type a run folder records (a wire name, kept so recorded runs read the same).
  if (words === '') return { kind: 'invalid', error: EMPTY_OUTPUT_ERROR, errorType: 'EmptyReply' };
  const attempt = attemptedCall(words);
  if (attempt) {
    return {
      kind: 'invalid',
      error:
        `Your output looks like a tool call (${attempt}), but no call could be read from it. Use the tools ` +
        'offered (native function calls), or write each call as <tool_call>{"name": <tool>, "arguments": {…}}' +
        '</tool_call>; to end the task, call stop with the final answer.',
      errorType: 'UnreadableToolCall',
    };
  }
  if (!endOnNoCall) return { kind: 'invalid', error: NO_TOOL_CALL_ERROR, errorType: 'NoToolCall' };
  return { kind: 'final', answer: words };
}
