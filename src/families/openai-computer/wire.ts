// The OpenAI Responses API as the openai-computer family speaks it: its two computer tools and how an endpoint picks
// one, the output items it records and replays (reasoning, computer_call, message), and the small readers of untyped
// JSON (a recorded output, a response body) into those items. Shared by the request, the reader and the call.
import type {
  ResponseComputerToolCall,
  ResponseOutputMessage,
  ResponseReasoningItem,
} from 'openai/resources/responses/responses';
import type { EndpointPromptSettings } from '../family';

/** The family's name, as tasks and the config give it. */
export const OPENAI_COMPUTER = 'openai-computer';

/** The computer tools it speaks: the GA `computer` (batched `actions[]`) and the preview (one `action` per call). */
export const OPENAI_TOOLS = ['computer', 'computer_use_preview'] as const;
export type OpenAiTool = (typeof OPENAI_TOOLS)[number];

const isTool = (name: string): name is OpenAiTool => (OPENAI_TOOLS as readonly string[]).includes(name);

/**
 * The tool an endpoint speaks: its `tool` setting; else its model's name (`computer-use-preview…` speaks the preview
 * tool, every other name the GA one); else the GA tool, the newest. The config checks `tool` against OPENAI_TOOLS, so
 * another value cannot arrive here; the older alias `computer_use` is read as `computer` anyway. A task that overrides
 * only the model keeps the endpoint's tool: set `tool` when the names disagree.
 */
export function toolFor(endpoint: EndpointPromptSettings | undefined): OpenAiTool {
  const named = endpoint?.tool === 'computer_use' ? 'computer' : endpoint?.tool;
  if (named !== undefined && isTool(named)) return named;
  const model = modelOf(endpoint);
  return model !== undefined && /computer-use-preview/i.test(model) ? 'computer_use_preview' : 'computer';
}

/** The endpoint's model name, when its settings carry one (the worker config's endpoint does). */
export function modelOf(endpoint: EndpointPromptSettings | undefined): string | undefined {
  return endpoint && 'model' in endpoint && typeof endpoint.model === 'string' ? endpoint.model : undefined;
}

/** An output item the family records and sends back unchanged in later requests. */
export type ReplayItem = ResponseOutputMessage | ResponseReasoningItem | ResponseComputerToolCall;

export type JsonObject = Record<string, unknown>;
export const isRecord = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

const REPLAYED_TYPES = ['message', 'reasoning', 'computer_call'];

/**
 * Whether an output item is one the family replays. Only the `type` is checked: the item came from the provider (or
 * from our record of it) and goes back to the provider as it came.
 */
function isReplayItem(v: unknown): v is ReplayItem {
  return isRecord(v) && typeof v.type === 'string' && REPLAYED_TYPES.includes(v.type);
}

/** The items of a response body's `output` the family keeps (others, of tools it never declares, are dropped). */
export function replayItemsOf(body: unknown): ReplayItem[] {
  const output = isRecord(body) && Array.isArray(body.output) ? body.output : [];
  return output.filter(isReplayItem);
}

/** The items of a recorded output (outputText's JSON array); null when the record is no such array. */
export function recordedItems(text: string): ReplayItem[] | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  return Array.isArray(parsed) ? parsed.filter(isReplayItem) : null;
}

/** The text of a message item (output_text and refusal parts). */
export function messageText(item: ResponseOutputMessage): string {
  const parts = Array.isArray(item.content) ? item.content : [];
  return parts
    .map((p) => (p.type === 'output_text' ? p.text : p.type === 'refusal' ? p.refusal : ''))
    .filter(Boolean)
    .join('\n');
}

/** The summary text of a reasoning item. */
export function reasoningText(item: ResponseReasoningItem): string {
  const parts = Array.isArray(item.summary) ? item.summary : [];
  return parts
    .map((p) => p.text)
    .filter(Boolean)
    .join('\n');
}

/** The computer_call items of a turn. */
export function callsOf(items: readonly ReplayItem[]): ResponseComputerToolCall[] {
  return items.filter((i): i is ResponseComputerToolCall => i.type === 'computer_call');
}
