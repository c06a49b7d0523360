// What a provider stand-in outputs for one model call, before it is put in that provider's wire format: the scripted
// model's thoughts and actions, in screenshot pixels (the screenshot the request carried), neutral to every provider.
// Each stand-in (openai-responses.ts, anthropic-messages.ts, gemini-generate.ts) puts a StandInOutput into its
// provider's response body, in the provider's own coordinate space, batching and safety protocol, written from
// docs/provider-formats.md and the provider SDK's types, never from our adapters (src/families/).

/** A point in the screenshot the request carried, in its pixels (0,0 top left). */
export interface ScreenPoint {
  x: number;
  y: number;
}

/** One action in screenshot pixels. `keys`: key names as a person writes them (`Control`, `Shift`, `a`, `Enter`). */
export type ScreenAction =
  | ({ kind: 'click'; button: 'left' | 'right' | 'middle'; count: 1 | 2 | 3; keys?: string[] } & ScreenPoint)
  | ({ kind: 'move' } & ScreenPoint)
  | { kind: 'drag'; path: ScreenPoint[] }
  | { kind: 'type'; text: string; at?: ScreenPoint; pressEnter?: boolean }
  | { kind: 'keys'; keys: string[] }
  | ({ kind: 'scroll'; dx: number; dy: number } & ScreenPoint)
  | { kind: 'wait'; seconds: number }
  | { kind: 'navigate'; url: string }
  | { kind: 'back' }
  | { kind: 'screenshot' };

/** The provider's confirmation request on the output's first action (OpenAI's pending safety check, Gemini's). */
export interface StandInSafetyCheck {
  /** OpenAI's check code (`malicious_instructions`, `irrelevant_domain`, `sensitive_domain`). */
  code: string;
  /** What the person is asked. */
  message: string;
}

/** A deliberately malformed output of the kind the provider really sends (to test that it is fed back). */
export type StandInMalformed =
  | 'unknown-action' // an action type the provider's set does not have
  | 'missing-coordinate' // a pointer action without its point
  | 'off-screen' // a point outside the screenshot
  | 'malformed-function-call' // Gemini's finishReason MALFORMED_FUNCTION_CALL
  | 'unparsable'; // chat formats: a UI-TARS `Action:` line that does not parse, a Qwen `<tool_call>` of broken JSON

export interface StandInOutput {
  /** The model's text before its actions (its reasoning shown to the user); may be empty. */
  thoughts: string;
  /** Actions in order; several are one batch (one model call). Empty: a text-only output (the task's end or a question). */
  actions: ScreenAction[];
  /** A text-only output's meaning: the final answer, or a question to the person (Anthropic asks in plain text). */
  final?: { kind: 'answer' | 'question'; text: string };
  safetyCheck?: StandInSafetyCheck;
  malformed?: StandInMalformed;
  /** Token counts the response reports. */
  usage?: { input: number; output: number; cachedInput?: number };
}

/** What a stand-in learned from a request: the screenshot's size, and what the request acknowledged or answered. */
export interface StandInRequestFacts {
  /** The newest screenshot's size in pixels, read from the image the request carried (PNG or JPEG header). */
  screenshot: { width: number; height: number } | null;
  /** OpenAI: the ids in `acknowledged_safety_checks`; Gemini: true when `safety_acknowledgement` was sent. */
  acknowledged: string[];
  /** Problems with the request against the provider's documented format; empty when it is well formed. */
  problems: string[];
}
