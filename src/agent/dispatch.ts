// Carrying out a parsed model action in the browser: one handler per action in a table. The action is first brought
// into the browser's units in exactly one place (`performed`); the handler carries that out and the text fed back is
// taken from the observation table (observations.ts). Errors become text the model sees next step.
import type { AgentAction } from '../actions/schemas';
import { describeAction } from '../actions/describe';
import type { CoordinateSpace, Viewport } from '../coords/viewport';
import { modelToViewport, scaleScroll } from '../coords/viewport';
import { resolveVisitUrl, webSearchUrl } from '../model/urls';
import type { ActionOutcome, PerformedAction } from './observations';
import { failureText, loadedFromRecordText, navigationFailureText, observationOf } from './observations';
import type { SecretResolution } from './secrets';
import { hasSecretPlaceholder, redactedError } from './secrets';
import { isSessionLostType } from './failure-types';
import type { ActionTarget } from '../actions/target';

export interface DispatchContext {
  target: ActionTarget;
  space: CoordinateSpace;
  viewport: Viewport;
  /** Answers a question from page text (a model sub-call). */
  answerFromPage: (question: string, pageText: string) => Promise<string>;
  searchTemplate?: string;
  /**
   * Resolves the `{{secret:NAME}}` placeholders of a `type` text for the page the keyboard types into now (the act
   * activity's worker-side secrets, src/agent/secrets.ts). Absent: a text with a placeholder is refused.
   */
  resolveSecrets?: (text: string) => Promise<SecretResolution>;
  /**
   * Called with the action in the browser's units just before it is carried out (the act's element record,
   * src/browser/element-record.ts). What it throws is ignored: it never fails the action.
   */
  beforeAction?: (action: PerformedAction) => Promise<void>;
}

export interface DispatchResult {
  /** What happened, recorded as the action's tool_output (observations.ts). */
  output: string;
  error: string | null;
  /** Text fed into the next step's prompt (a page answer, a memorized fact, a failed navigation or action). */
  textObservation: string | null;
}

/** A failure the handler reports itself instead of throwing (visit_url: the model may try another address). */
interface HandlerFailure {
  error: string;
  textObservation: string;
}

type HandlerResult = ActionOutcome | HandlerFailure | void;
type Handler<A extends PerformedAction> = (action: A, ctx: DispatchContext) => Promise<HandlerResult>;
type Handlers = { [K in PerformedAction['action']]: Handler<Extract<PerformedAction, { action: K }>> };

/**
 * The action in the browser's units: coordinates in viewport pixels, scroll amounts in viewport pixels, visit_url's
 * address resolved. The one place where a model action's numbers are converted.
 */
function performed(action: AgentAction, ctx: DispatchContext): PerformedAction {
  const { space, viewport } = ctx;
  const moved: PerformedAction =
    'coordinate' in action && action.coordinate
      ? { ...action, coordinate: toPair(modelToViewport(action.coordinate, space, viewport)) }
      : action;
  switch (moved.action) {
    case 'scroll':
      return { ...moved, pixels: scaleScroll(moved.pixels, 'vertical', space, viewport) };
    case 'hscroll':
      return { ...moved, pixels: scaleScroll(moved.pixels, 'horizontal', space, viewport) };
    case 'visit_url':
      return { ...moved, url: resolveVisitUrl(moved.url, ctx.searchTemplate) };
    default:
      return moved;
  }
}

const HANDLERS: Handlers = {
  left_click: async (a, ctx) => void (await ctx.target.leftClick(...a.coordinate)),
  double_click: async (a, ctx) => void (await ctx.target.doubleClick(...a.coordinate)),
  triple_click: async (a, ctx) => void (await ctx.target.tripleClick(...a.coordinate)),
  right_click: async (a, ctx) => void (await ctx.target.rightClick(...a.coordinate)),
  mouse_move: async (a, ctx) => void (await ctx.target.mouseMove(...a.coordinate)),
  left_click_drag: async (a, ctx) => void (await ctx.target.leftClickDrag(...a.coordinate)),
  type: async (a, ctx) => {
    const coordinate = 'coordinate' in a ? a.coordinate : undefined;
    const options = { pressEnter: a.press_enter ?? false, deleteExistingText: a.delete_existing_text ?? false };
    if (hasSecretPlaceholder(a.text)) return typeSecret(a.text, coordinate, options, ctx);
    await ctx.target.type(a.text, {
      ...options,
      ...(coordinate ? { at: { x: coordinate[0], y: coordinate[1] } } : {}),
    });
  },
  key: async (a, ctx) => backOutcome(await ctx.target.keys(a.keys)), // Alt+Left is a back
  // The model's positive amounts scroll up/left; the mouse wheel's positive deltas scroll down/right.
  scroll: async (a, ctx) => void (await ctx.target.scroll(0, 0 - a.pixels)),
  hscroll: async (a, ctx) => void (await ctx.target.scroll(0 - a.pixels, 0)),
  visit_url: async (a, ctx) => {
    try {
      await ctx.target.visitUrl(a.url);
    } catch (err) {
      if (isSessionError(err)) throw err;
      if (isPolicyBlock(err)) return { error: err.message, textObservation: err.message };
      const message = errorText(err);
      return { error: message, textObservation: navigationFailureText(a.url, message) };
    }
  },
  history_back: async (_a, ctx) => backOutcome(await ctx.target.historyBack()),
  web_search: async (a, ctx) => {
    try {
      await ctx.target.visitUrl(webSearchUrl(a.query, ctx.searchTemplate));
    } catch (err) {
      // The search engine itself refused by the URL policy: said as visit_url says it.
      if (isPolicyBlock(err)) return { error: err.message, textObservation: err.message };
      throw err;
    }
  },
  read_page_answer_question: async (a, ctx) => {
    const text = await ctx.target.pageMarkdown();
    return { answer: await ctx.answerFromPage(a.question, text) };
  },
  pause_and_memorize_fact: async () => undefined,
  wait: async (a, ctx) => void (await ctx.target.wait(a.time)),
  ask_user_question: async () => undefined,
  terminate: async () => undefined,
};

/**
 * A `type` whose text names secrets: click first (when it has a coordinate), so the page checked is the one typed
 * into, then resolve and type the values, or refuse without typing anything. Only this handler ever sees a value;
 * the action (and so its observation text) keeps the placeholder, and an error is scrubbed of the values.
 */
async function typeSecret(
  text: string,
  coordinate: readonly [number, number] | undefined,
  options: { pressEnter: boolean; deleteExistingText: boolean },
  ctx: DispatchContext,
): Promise<HandlerFailure | void> {
  if (coordinate) await ctx.target.leftClick(coordinate[0], coordinate[1]);
  const resolved: SecretResolution = ctx.resolveSecrets
    ? await ctx.resolveSecrets(text)
    : { ok: false, name: '', refusal: 'Refused to type secrets: this worker resolves no secrets here.' };
  if (!resolved.ok) return { error: resolved.refusal, textObservation: resolved.refusal };
  try {
    await ctx.target.type(resolved.text, options);
  } catch (err) {
    throw redactedError(err, resolved.values);
  }
}

/**
 * A back's outcome as the observation needs it: the recorded URL it loaded where a restored tab had no history of its
 * own (the browser environment's ActionOutcome.loadedFromRecord); nothing for any other result.
 */
function backOutcome(result: unknown): ActionOutcome | void {
  if (typeof result !== 'object' || result === null || !('loadedFromRecord' in result)) return undefined;
  return typeof result.loadedFromRecord === 'string' ? { loadedFromRecord: result.loadedFromRecord } : undefined;
}

function toPair(p: { x: number; y: number }): [number, number] {
  return [p.x, p.y];
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.split('\n')[0] ?? text;
}

/** Errors that mean the session itself is gone (failure-types.ts); they must reach the workflow, not the model. */
function isSessionError(err: unknown): boolean {
  return err instanceof Error && isSessionLostType(err.name);
}

/** The URL policy refused the address (src/browser/policy-guard.ts); its message is `blocked by policy: url: why`. */
function isPolicyBlock(err: unknown): err is Error {
  return err instanceof Error && err.name === 'PolicyBlockedError';
}

function isFailure(result: HandlerResult): result is HandlerFailure {
  return result !== undefined && 'error' in result;
}

/** A failed action: described in the model's own terms, with the error fed back. */
function failed(action: AgentAction, error: string, textObservation: string): DispatchResult {
  return { output: describeAction(action), error, textObservation };
}

export async function dispatchAction(action: AgentAction, ctx: DispatchContext): Promise<DispatchResult> {
  try {
    const done = performed(action, ctx);
    await ctx.beforeAction?.(done).catch(() => undefined);
    const handler = HANDLERS[done.action] as Handler<PerformedAction>;
    const result = await handler(done, ctx);
    if (isFailure(result)) return failed(action, result.error, result.textObservation);
    const entry = observationOf(done);
    const outcome = result ?? {};
    // A back that loaded a recorded page says so, and the model reads it (what it sees is not what it left).
    const note = outcome.loadedFromRecord === undefined ? '' : ` ${loadedFromRecordText(outcome.loadedFromRecord)}`;
    const output = entry.text(done, outcome) + note;
    return { output, error: null, textObservation: entry.textObservation || note ? output : null };
  } catch (err) {
    if (isSessionError(err)) throw err;
    const message = errorText(err);
    return failed(action, message, failureText(message));
  }
}
