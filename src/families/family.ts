// A model family: everything that differs between the models the agent can drive (Fara-1.5, Fara-7B, a test's own):
// the request it is sent, how its output becomes one of our actions, its coordinate space and screenshot size, and
// how a question it asks reaches the person. The decide activity calls these members and nothing family-specific;
// a family is registered by name (registry.ts), and a task names its family in `TaskInput.profile`.
import type { z } from 'zod';
import type { AgentAction } from '../actions/schemas';
import type { ScreenSize } from '../actions/tool-schema';
import type { ChatMessage, CompleteOptions, ModelEndpoint, ModelPrice, NativeCompletion } from '../model/client';
import type { HistoryEntry, ImageLoader } from '../model/context';
import type { ModelOutputError } from '../model/errors';
import { outputAsText } from '../model/parse';
import type { ModelOutput, ParsedOutput } from '../model/parse';
import type { PromptActions } from '../model/prompt';

/** The prompt settings of the task's model endpoint (the worker config's `models.<name>`). */
export interface EndpointPromptSettings {
  identity?: string | undefined;
  promptFile?: string | undefined;
  /** The sentence after each screenshot, replacing the family's own. */
  stepPrompt?: string | undefined;
  /** The provider's computer-use tool (`models.<name>.tool`), for a family with several (`tools`). */
  tool?: string | undefined;
  /**
   * The grid a relative-coordinate model speaks (`models.<name>.grid`, for a family with `grids`): Qwen3-VL's points
   * run 0..999 or 0..1000, a denominator its sources disagree on. Absent: the family's default.
   */
  grid?: number | undefined;
  /** The model's name as the task calls it (its override, else the endpoint's `model`). */
  model?: string | undefined;
}

/** What the family needs to build one step's request. */
export interface RequestInput {
  /** The neutral history of the run (src/agent/history.ts), oldest first; the current step's observation last. */
  history: readonly HistoryEntry[];
  /** Turns a screenshot ref into a data URL of the screenshot resized by the family's `resizeFactor`. */
  loadImage: ImageLoader;
  /** The size screenshots are resized to (`resizedScreen`). */
  screen: ScreenSize;
  endpoint: EndpointPromptSettings | undefined;
  /** The task's own identity choice (a registry name), replacing the endpoint's. */
  identity: string | undefined;
  /** The context budget: screenshots kept, and a token budget (0: none). */
  imagesKept: number | undefined;
  tokenBudget: number | undefined;
}

/**
 * One step's request: the chat, the native tools (if the family calls tools natively), the actions it may use. A
 * family that speaks its provider's own API puts the provider's request body in `native` (and may leave `messages`
 * empty); its `call` sends it.
 */
export interface FamilyRequest {
  messages: ChatMessage[];
  tools?: CompleteOptions['tools'];
  /** The action names the model is allowed this step (recorded as agent_state.tools_available). */
  allowed: readonly string[];
  /** The provider's request body (a native family's: Responses, Messages, generateContent). */
  native?: unknown;
}

/** What reading an output needs besides the output. */
export interface ReadInput {
  screen: ScreenSize;
  allowed: readonly string[];
  /** End the task with the raw output instead of an invalid output (Fara's terminate_on_parse_error). */
  terminateOnParseError: boolean;
  /** The endpoint's settings, as the request got them (a family whose reading depends on them: qwen-vl's generation). */
  endpoint?: EndpointPromptSettings | undefined;
}

/** What an action means for the loop: carry it out, ask the person (with this text), or end (with this text). */
export interface Outcome {
  kind: 'act' | 'ask' | 'terminate';
  text: string | null;
}

/**
 * Why a request could not be built from the task's settings, with the failure type the task ends with (e.g.
 * InvalidTaskInput, PromptFileError): not retried.
 */
export class RequestRefusedError extends Error {
  override name = 'RequestRefusedError';
  constructor(
    override readonly cause: Error,
    readonly failureType: string,
  ) {
    super(cause.message, { cause });
  }
}

export interface ModelFamily {
  /** The name tasks give in `TaskInput.profile` (`--profile`/`--family`, `models.<name>.profile`/`.family`). */
  readonly name: string;
  /** Our actions its outputs become (strict objects, discriminated on `action`); recorded actions are read with it. */
  readonly actionSchema: z.ZodType<AgentAction>;
  /** Every action name it may use. */
  readonly allowedActions: readonly string[];
  /** Where its coordinates live: a fixed 1000x1000 square, or pixels of the resized screenshot. */
  readonly coordinateSpace: 'norm1000' | 'resized-pixels';
  /** The smart_resize factor of its vision encoder: what size of screenshot it is sent. */
  readonly resizeFactor: number;
  /**
   * The most pixels a screenshot it is sent may have (a provider's limit, e.g. Anthropic's ≈1.15 MP): a larger
   * viewport's screenshot is scaled down, its aspect kept. Absent: smart_resize's own bound.
   */
  readonly maxPixels?: number;
  /** The provider's computer-use tools it speaks, when several (`models.<name>.tool` picks one); absent: one. */
  readonly tools?: readonly string[];
  /** The grids its relative coordinates may be given on (`models.<name>.grid` picks one); absent: no such setting. */
  readonly grids?: readonly number[];
  /** The coordinate space its numbers live in, given the resized screenshot size. */
  displaySize(resized: ScreenSize): ScreenSize;
  /** The step's request: system prompt, tools, screenshots and history within the context budget. */
  request(input: RequestInput): Promise<FamilyRequest>;
  /**
   * Sends the request to a provider's own API (not OpenAI chat completions) with that provider's SDK, from the
   * request's `native` body, and returns the response (`native`: the body as the provider sent it, which `read`
   * reads and `outputText` records). Absent: the request goes as an OpenAI chat completion (ModelClient.complete).
   * The endpoint's key goes to the endpoint's base URL only; `signal` cancels the call.
   */
  call?(request: FamilyRequest, endpoint: ModelEndpoint, signal: AbortSignal): Promise<NativeCompletion>;
  /**
   * The provider API `call` speaks (OpenAI `responses`, Anthropic `messages`, Gemini `generate-content`): other
   * callers of the family's endpoints (the desktop agent's action and vision models) speak it too. Absent: OpenAI chat
   * completions.
   */
  readonly api?: 'responses' | 'messages' | 'generate-content';
  /** The provider's list price of a model (US dollars per million tokens), used when its endpoint sets no `price`. */
  priceOf?(model: string): ModelPrice | undefined;
  /**
   * The output as one text, as recorded and sent back in later requests; absent: native tool calls written out as
   * `<tool_call>` blocks after the text, as Fara writes them (outputTextOf).
   */
  outputText?(output: ModelOutput): string;
  /** @deprecated the old name of `outputText`, still read when a family has no `outputText` */
  replyText?(output: ModelOutput): string;
  /** Its output read into one of our actions; an output that is none throws a ModelOutputError. */
  read(output: ModelOutput, input: ReadInput): ParsedOutput;
  /** The one line the model reads next step after an output that was no valid action. */
  feedback(error: ModelOutputError, screen: ScreenSize): string;
  /** What an action means for the loop: a question for the person (a confirmation it asks for), an end, or an act. */
  outcome(action: AgentAction): Outcome;
  /**
   * Why `identity` cannot be used (one line), or null. `custom`: a text of its own is allowed (the worker config);
   * a task may only name a registered identity.
   */
  identityIssue(identity: string, custom: boolean): string | null;
  /** The actions a prompt file (`models.<name>.promptFile`) lets it use; throws PromptFileError or PromptActionsError. */
  promptFileActions(file: string): Promise<PromptActions>;
}

/** The family's output as one text: its `outputText`, the old `replyText` of a family written before, or Fara's. */
/**
 * The API a caller with function tools of its own (the desktop agent) speaks to an endpoint of this family: Anthropic's
 * Messages or Gemini's generateContent; undefined: OpenAI chat completions, for every other family, OpenAI's Responses
 * one included (OpenAI's chat completions take function tools and images alike).
 */
export function toolUseApi(family: Pick<ModelFamily, 'api'> | undefined): 'messages' | 'generate-content' | undefined {
  return family?.api === 'messages' || family?.api === 'generate-content' ? family.api : undefined;
}

export function outputTextOf(family: ModelFamily, output: ModelOutput): string {
  if (family.outputText) return family.outputText(output);
  if (family.replyText) return family.replyText(output);
  return outputAsText(output);
}
