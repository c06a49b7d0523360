// A request the scripted model server answered, as recorded for tests' assertions (`GET /_requests`): the chat
// route's fields (with the format it detected), and the provider routes' (provider, turn, tool, problems,
// acknowledgements). The desktop agent's calls on Anthropic and Gemini (provider-desktop.ts) fill in the provider, the
// call kind, the entry, the declared functions, the image count and the texts, as the chat route does.
import type { ChatFormat } from './chat-detect';
import type { StandInProvider } from './script-turns';

export const JUDGE_CALL_KINDS = ['key_points', 'relevance', 'verdict', 'rubric'] as const;
/** `extract`: a task's output extraction (docs/output.md), answered from the script's `extract` replies. */
export const SCRIPTED_CALL_KINDS = ['describe', 'action', 'ground', 'extract', ...JUDGE_CALL_KINDS] as const;
export type ScriptedCallKind = (typeof SCRIPTED_CALL_KINDS)[number];

export interface RecordedRequest {
  /** The provider route the request came by (absent: chat completions). */
  provider?: StandInProvider;
  /** Chat completions: the format the request speaks (chat-detect.ts), which its answer is written in. */
  format?: ChatFormat;
  script: string;
  /**
   * The 0-based script entry answered (a provider request refused before its turn was known: -1; a desktop call: the
   * entry its header names, -1 when it names none).
   */
  index: number;
  /**
   * Provider routes and the UI-TARS and Qwen-VL chat formats: the model turn the request asks for, by the provider's
   * or format's counting rule (provider-routes.ts, chat-formats.ts).
   */
  turn?: number;
  /** Provider routes: the computer tool declared (type with version; Gemini: `computer_use <environment>`). */
  tool?: string;
  /**
   * Provider routes and chat formats: the request's problems against the format (empty when well formed); a desktop
   * call's also include those of its kind and its entry (an undeclared tool).
   */
  problems?: string[];
  /** Provider routes: what the request acknowledged (OpenAI's check ids, Gemini's acknowledged calls). */
  acknowledged?: string[];
  subcall: boolean;
  /** The `x-cua-call` header, when the request had one. */
  call?: ScriptedCallKind;
  /** Names of the function tools offered in the request ([] when none): Anthropic's tools, Gemini's declarations. */
  toolNames: string[];
  /**
   * The request's `tool_choice`, when it had a string one; a desktop call on Anthropic: `auto`, `any`, `none` or
   * `tool:<name>`; on Gemini: the functionCallingConfig mode.
   */
  toolChoice?: string;
  imageCount: number;
  messageCount: number;
  /** Text of the last user message (what the model was told this step). */
  lastUserText: string;
  /** All text parts of all messages, joined, for assertions. */
  allText: string;
  at: number;
}
