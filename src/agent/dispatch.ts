// Carrying out a parsed model action in the browser: one handler per action in a table, coordinates converted
// from the model's space to viewport pixels in exactly one place. Errors become text the model sees next step.
import type { AgentAction } from '../actions/schemas';
import { describeAction } from '../actions/describe';
import type { CoordinateSpace, Viewport } from '../coords/viewport';
import { modelToViewport, scaleScroll } from '../coords/viewport';
import { resolveVisitUrl, webSearchUrl } from '../model/urls';

/** The slice of the browser environment the dispatcher needs (tests may pass a fake). */
export interface ActionTarget {
  leftClick(x: number, y: number): Promise<unknown>;
  doubleClick(x: number, y: number): Promise<unknown>;
  tripleClick(x: number, y: number): Promise<unknown>;
  rightClick(x: number, y: number): Promise<unknown>;
  mouseMove(x: number, y: number): Promise<unknown>;
  leftClickDrag(x: number, y: number): Promise<unknown>;
  type(
    text: string,
    options: { pressEnter?: boolean; deleteExistingText?: boolean; at?: { x: number; y: number } },
  ): Promise<unknown>;
  keys(chord: readonly string[]): Promise<unknown>;
  scroll(dx: number, dy: number): Promise<unknown>;
  visitUrl(url: string): Promise<unknown>;
  historyBack(): Promise<unknown>;
  wait(seconds: number): Promise<unknown>;
  pageMarkdown(): Promise<string>;
}

export interface DispatchContext {
  target: ActionTarget;
  space: CoordinateSpace;
  viewport: Viewport;
  /** Answers a question from page text (a model sub-call). */
  answerFromPage: (question: string, pageText: string) => Promise<string>;
  searchTemplate?: string;
}

export interface DispatchResult {
  /** What happened, recorded as the action's tool_output. */
  output: string;
  error: string | null;
  /** Text fed into the next step's prompt (a page answer, a failed navigation, a failed action). */
  textObservation: string | null;
}

type Handler<A extends AgentAction> = (action: A, ctx: DispatchContext) => Promise<Partial<DispatchResult> | void>;
type Handlers = { [K in AgentAction['action']]: Handler<Extract<AgentAction, { action: K }>> };

const at = (coordinate: readonly [number, number], ctx: DispatchContext) =>
  modelToViewport(coordinate, ctx.space, ctx.viewport);

const HANDLERS: Handlers = {
  left_click: async (a, ctx) => void (await ctx.target.leftClick(...xy(at(a.coordinate, ctx)))),
  double_click: async (a, ctx) => void (await ctx.target.doubleClick(...xy(at(a.coordinate, ctx)))),
  triple_click: async (a, ctx) => void (await ctx.target.tripleClick(...xy(at(a.coordinate, ctx)))),
  right_click: async (a, ctx) => void (await ctx.target.rightClick(...xy(at(a.coordinate, ctx)))),
  mouse_move: async (a, ctx) => void (await ctx.target.mouseMove(...xy(at(a.coordinate, ctx)))),
  left_click_drag: async (a, ctx) => void (await ctx.target.leftClickDrag(...xy(at(a.coordinate, ctx)))),
  type: async (a, ctx) => {
    const coordinate = 'coordinate' in a ? a.coordinate : undefined;
    await ctx.target.type(a.text, {
      pressEnter: a.press_enter ?? false,
      deleteExistingText: a.delete_existing_text ?? false,
      ...(coordinate ? { at: at(coordinate, ctx) } : {}),
    });
  },
  key: async (a, ctx) => void (await ctx.target.keys(a.keys)),
  // The model's positive amounts scroll up/left; the mouse wheel's positive deltas scroll down/right.
  scroll: async (a, ctx) =>
    void (await ctx.target.scroll(0, 0 - scaleScroll(a.pixels, 'vertical', ctx.space, ctx.viewport))),
  hscroll: async (a, ctx) =>
    void (await ctx.target.scroll(0 - scaleScroll(a.pixels, 'horizontal', ctx.space, ctx.viewport), 0)),
  visit_url: async (a, ctx) => {
    const url = resolveVisitUrl(a.url, ctx.searchTemplate);
    try {
      await ctx.target.visitUrl(url);
    } catch (err) {
      if (isSessionError(err)) throw err;
      const message = errorText(err);
      return { error: message, textObservation: `I tried to open ${url}, but it failed: ${message}` };
    }
  },
  history_back: async (_a, ctx) => void (await ctx.target.historyBack()),
  web_search: async (a, ctx) => void (await ctx.target.visitUrl(webSearchUrl(a.query, ctx.searchTemplate))),
  read_page_answer_question: async (a, ctx) => {
    const text = await ctx.target.pageMarkdown();
    const answer = await ctx.answerFromPage(a.question, text);
    return { output: answer, textObservation: answer };
  },
  pause_and_memorize_fact: async (a) => ({ output: `Memorized: ${a.fact}` }),
  wait: async (a, ctx) => void (await ctx.target.wait(a.time)),
  ask_user_question: async (a) => ({ output: a.question }),
  terminate: async (a) => ({ output: 'answer' in a ? a.answer : `Task ended: ${a.status}` }),
};

function xy(p: { x: number; y: number }): [number, number] {
  return [p.x, p.y];
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.split('\n')[0] ?? text;
}

/** Errors that mean the browser session itself is gone; they must reach the workflow, not the model. */
export const SESSION_ERRORS = new Set(['BrowserClosedError', 'UnknownSessionError', 'PageRecoveryError']);

function isSessionError(err: unknown): boolean {
  return err instanceof Error && SESSION_ERRORS.has(err.name);
}

export async function dispatchAction(action: AgentAction, ctx: DispatchContext): Promise<DispatchResult> {
  const handler = HANDLERS[action.action] as Handler<AgentAction>;
  try {
    const res = (await handler(action, ctx)) ?? {};
    return {
      output: res.output ?? describeAction(action),
      error: res.error ?? null,
      textObservation: res.textObservation ?? null,
    };
  } catch (err) {
    if (isSessionError(err)) throw err;
    const message = errorText(err);
    return { output: describeAction(action), error: message, textObservation: `The action failed: ${message}` };
  }
}
