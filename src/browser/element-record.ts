// What an act records of the element it acts on, for a later replay to find it again: for a pointer action the
// element under the point, for typing the focused field (or the one its point clicks). One evaluation, in an isolated
// world of the page's main frame (the page's own scripts cannot tamper with the prototypes it uses), just before the
// action; same-origin frames and open shadow roots are followed, another origin's frame is recorded as the frame
// element. Taking it never fails the act: a page that cannot be read gives `element: null` and the reason.
import type { Page } from 'playwright';
import { z } from 'zod';
import type { PerformedAction } from '../agent/observations';
import { viewportToModel } from '../coords/viewport';
import type { CoordinateSpace, Viewport } from '../coords/viewport';
import { withCdp } from './cdp';
import { accessibleName, roleOf } from './element-roles';
import { collectElement, describeElement, locateElement, uniqueSelector } from './element-script';
import type { Box, ElementProbe, RawElement } from './element-script';

export type { Box, ElementProbe } from './element-script';

/** The element as recorded in the tool output's `metadata.element` (snake_case, as the run folder's metadata is). */
export interface ElementRecord {
  /** Under the action's point, or the focused field. */
  source: 'point' | 'focus';
  tag: string;
  role: string | null;
  name: string;
  /** Visible text, whitespace collapsed and capped; empty for a form field. */
  text: string;
  /** A CSS selector in the element's own document or shadow root (see `within`). */
  selector: string;
  /** The selector matched this element alone when it was taken. */
  selector_unique: boolean;
  /** The frames and shadow roots it is in, outermost first: the selectors of their frame elements and hosts. */
  within?: { kind: 'frame' | 'shadow'; selector: string }[];
  /** The point or focus was in a frame of another origin, which is not read: this is the frame element. */
  cross_origin_frame?: true;
  attributes: { id?: string; name?: string; type?: string; href?: string; test_id?: string; placeholder?: string };
  /** CSS pixels of the viewport (the screenshot's pixels at a device pixel ratio of 1). */
  box: Box;
  /** The box in the model's coordinate space, the one the action's coordinate is written in. */
  model_box: Box;
  /** The box in the screenshot's pixels, when the device pixel ratio is not 1. */
  screenshot_box?: Box;
}

/** The metadata an act adds to its tool output: the record, or null and why it is missing. */
export type ElementNote = { element: ElementRecord } | { element: null; element_error: string };

export interface ReadElementOptions {
  space: CoordinateSpace;
  viewport: Viewport;
  /** Applied to every string recorded (the worker's secret redaction). */
  redact?: (text: string) => string;
  timeoutMs?: number;
  textCap?: number;
}

/** How long the evaluation may take before the act goes on without a record (a page busy in a script, a dialog). */
export const ELEMENT_TIMEOUT_MS = 1_000;
const TEXT_CAP = 200;
const ATTR_CAP = 200;
const WORLD = 'cua-element-record';

/**
 * What an action's record is of: its point for a pointer action (a drag's end point: its start is where the pointer
 * was left, recorded by the action that moved it there), the point a `type` clicks first, else the focused field.
 * Undefined for actions that act on no element (keys, scroll at the pointer, navigation, cognition).
 */
export function elementProbeOf(action: PerformedAction): ElementProbe | undefined {
  switch (action.action) {
    case 'left_click':
    case 'double_click':
    case 'triple_click':
    case 'right_click':
    case 'mouse_move':
    case 'left_click_drag':
      return { kind: 'point', x: action.coordinate[0], y: action.coordinate[1] };
    case 'type':
      return action.coordinate
        ? { kind: 'point', x: action.coordinate[0], y: action.coordinate[1] }
        : { kind: 'focus' };
    default:
      return undefined;
  }
}

const boxSchema = z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() });
const text = z.string().max(10_000);
const maybe = text.nullable();
/** The page's answer is not trusted: checked and capped before anything is recorded. */
const rawSchema = z.union([
  z.object({
    found: z.object({
      tag: text,
      roleAttr: maybe,
      type: maybe,
      href: maybe,
      multiple: z.boolean(),
      size: z.number(),
      list: z.boolean(),
      editable: z.boolean(),
      ariaLabel: maybe,
      labelledBy: maybe,
      labels: z.array(text).max(10),
      alt: maybe,
      buttonValue: maybe,
      title: maybe,
      placeholder: maybe,
      text,
      id: maybe,
      name: maybe,
      testId: maybe,
      selector: text,
      selectorUnique: z.boolean(),
      within: z.array(z.object({ kind: z.enum(['frame', 'shadow']), selector: text })).max(10),
      crossOrigin: z.boolean(),
      box: boxSchema,
      dpr: z.number(),
    }),
  }),
  z.object({ missing: text }),
]);

const round1 = (v: number) => Math.round(v * 10) / 10;
const roundBox = (b: Box): Box => ({
  x: round1(b.x),
  y: round1(b.y),
  width: round1(b.width),
  height: round1(b.height),
});

/** A viewport box in the model's space (by its corners, so both sides scale as the coordinates do). */
export function modelBox(box: Box, space: CoordinateSpace, viewport: Viewport): Box {
  const [x1, y1] = viewportToModel({ x: box.x, y: box.y }, space, viewport);
  const [x2, y2] = viewportToModel({ x: box.x + box.width, y: box.y + box.height }, space, viewport);
  return roundBox({ x: x1, y: y1, width: x2 - x1, height: y2 - y1 });
}

/** The record from what the page reported: role and name worked out, boxes in each space, strings redacted. */
export function toElementRecord(
  raw: RawElement,
  probe: ElementProbe,
  opts: Pick<ReadElementOptions, 'space' | 'viewport' | 'redact' | 'textCap'>,
): ElementRecord {
  const cap = opts.textCap ?? TEXT_CAP;
  const r = (s: string) => (opts.redact ? opts.redact(s) : s);
  const role = roleOf(raw);
  const attributes: ElementRecord['attributes'] = {};
  const put = (key: keyof ElementRecord['attributes'], v: string | null) => {
    if (v) attributes[key] = r(v);
  };
  put('id', raw.id);
  put('name', raw.name);
  put('type', raw.type);
  put('href', raw.href);
  put('test_id', raw.testId);
  put('placeholder', raw.placeholder);
  const dpr = raw.dpr > 0 ? raw.dpr : 1;
  return {
    source: probe.kind,
    tag: raw.tag.slice(0, 40),
    role,
    name: r(accessibleName(raw, role, cap)),
    text: r(raw.text.slice(0, cap)),
    selector: r(raw.selector),
    selector_unique: raw.selectorUnique,
    ...(raw.within.length > 0 ? { within: raw.within.map((w) => ({ kind: w.kind, selector: r(w.selector) })) } : {}),
    ...(raw.crossOrigin ? { cross_origin_frame: true as const } : {}),
    attributes,
    box: roundBox(raw.box),
    model_box: modelBox(raw.box, opts.space, opts.viewport),
    ...(dpr === 1
      ? {}
      : {
          screenshot_box: roundBox({
            x: raw.box.x * dpr,
            y: raw.box.y * dpr,
            width: raw.box.width * dpr,
            height: raw.box.height * dpr,
          }),
        }),
  };
}

/** The expression evaluated in the isolated world: the page functions, with esbuild's `__name` helper stubbed. */
export function elementExpression(probe: ElementProbe, textCap = TEXT_CAP): string {
  const args = { probe, textCap, attrCap: ATTR_CAP };
  const helpers = Object.entries({ uniqueSelector, locateElement, describeElement }).map(([k, f]) => `${k}: ${f}`);
  return (
    `(() => { const __name = (f) => f; ` +
    `return (${collectElement.toString()})(${JSON.stringify(args)}, { ${helpers.join(', ')} }); })()`
  );
}

type Evaluated = { value: unknown } | { failed: string };

/** Evaluates `expression` in this module's isolated world of the page's main frame (Chromium, through CDP). */
async function evaluateIsolated(page: Page, expression: string): Promise<Evaluated | undefined> {
  return withCdp(page, async (cdp): Promise<Evaluated> => {
    const { frameTree } = await cdp.send('Page.getFrameTree');
    // The same world name gives the same world again: one per document, not one per call.
    const { executionContextId } = await cdp.send('Page.createIsolatedWorld', {
      frameId: frameTree.frame.id,
      worldName: WORLD,
    });
    const result = await cdp.send('Runtime.evaluate', {
      expression,
      contextId: executionContextId,
      returnByValue: true,
      silent: true,
    });
    if (result.exceptionDetails) {
      const why = result.exceptionDetails.exception?.description ?? result.exceptionDetails.text;
      return { failed: `the page script failed: ${why.split('\n')[0] ?? why}` };
    }
    return { value: result.result.value as unknown };
  });
}

/**
 * The record of the element the action is about to act on, or null with the reason it could not be taken (a closed
 * page, a page that does not answer in time, no element there, not Chromium). Never throws.
 */
export async function readElement(page: Page, probe: ElementProbe, opts: ReadElementOptions): Promise<ElementNote> {
  const timeoutMs = opts.timeoutMs ?? ELEMENT_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  try {
    const evaluated = await Promise.race([
      evaluateIsolated(page, elementExpression(probe, opts.textCap)).catch(() => undefined),
      timedOut,
    ]);
    if (evaluated === 'timeout') return missing(`the page did not answer within ${timeoutMs} ms`);
    if (evaluated === undefined) return missing('the page could not be read (closed, or not Chromium)');
    if ('failed' in evaluated) return missing(evaluated.failed);
    const parsed = rawSchema.safeParse(evaluated.value);
    if (!parsed.success) return missing('the page script gave an unexpected answer');
    if ('missing' in parsed.data) return missing(parsed.data.missing);
    return { element: toElementRecord(parsed.data.found, probe, opts) };
  } catch (err) {
    return missing(`the record failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
}

function missing(reason: string): ElementNote {
  return { element: null, element_error: reason.slice(0, 300) };
}
