// Renders an action as the exact text a Fara model emits: the thoughts, then a <tool_call> block holding
// {"name": "computer_use", "arguments": {...}}. Used by the scripted model server and to replay past model outputs.
import { TOOL_NAME } from '../actions/tool-schema';
import type { AgentAction } from '../actions/schemas';

export const TOOL_CALL_OPEN = '<tool_call>';
export const TOOL_CALL_CLOSE = '</tool_call>';

/**
 * JSON with the spacing Python's json.dumps uses by default (", " between items, ": " after keys), which is the
 * spacing the models were trained on. Non-ASCII characters are written as is; undefined members are left out.
 */
export function formatJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(formatJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${members.map(([k, v]) => `${JSON.stringify(k)}: ${formatJson(v)}`).join(', ')}}`;
  }
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`Cannot format ${typeof value} as JSON`);
  return text;
}

/** The action's arguments as the model writes them: `action` first, the thoughts left out. */
export function toolCallArguments(action: AgentAction): Record<string, unknown> {
  const { thoughts: _thoughts, action: name, ...rest } = action;
  return { action: name, ...rest };
}

/** The JSON body of a tool call for an action. */
export function renderToolCallJson(action: AgentAction): string {
  return formatJson({ name: TOOL_NAME, arguments: toolCallArguments(action) });
}

/** The full assistant text: thoughts, newline, then the tool call block. Empty thoughts give no leading line. */
export function renderToolCall(thoughts: string, action: AgentAction): string {
  const block = `${TOOL_CALL_OPEN}\n${renderToolCallJson(action)}\n${TOOL_CALL_CLOSE}`;
  return thoughts === '' ? block : `${thoughts}\n${block}`;
}
