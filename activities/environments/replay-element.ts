// Where a recorded element is on the live page (a replay's check, browser-replay.ts): still at the action's recorded
// point (the element there reads as the recorded one: same tag, and the same selector or the same role and name),
// moved (found by its selector when it was unique, else by its role and accessible name, else by its exact text,
// and read again at its new centre to be sure), or gone. Only what the viewport shows counts: an element scrolled out
// of view is not scrolled to (the model decides that step).
import type { Locator } from 'playwright';
import type { BrowserEnvironment } from '../../src/browser/environment';
import { readElement } from '../../src/browser/element-record';
import type { ElementRecord } from '../../src/browser/element-record';
import { modelToViewport, NORM1000, resizedPixelsSpace, viewportToModel } from '../../src/coords/viewport';
import type { TaskInput } from '../../src/contract/task';
import type { StepRef } from '../../src/contract/activities';
import { eventId } from '../../src/trajectory/ids';
import type { Event } from '../../src/trajectory/schema';
import { screenOf } from '../support';

type ActionEvent = Extract<Event, { type: 'action' }>;

export type FoundElement =
  { kind: 'same' } | { kind: 'moved'; coordinate: [number, number]; by: By } | { kind: 'gone'; why: string };

type By = 'selector' | 'role and name' | 'text';
type Recorded = Partial<ElementRecord> & Record<string, unknown>;

/** Whether the element read on the page is the recorded one. */
export function sameElement(recorded: Recorded, seen: ElementRecord): boolean {
  if (recorded.tag !== seen.tag) return false;
  if (recorded.selector && recorded.selector_unique && recorded.selector === seen.selector) return true;
  if ((recorded.name ?? '') !== seen.name || (recorded.role ?? null) !== seen.role) return false;
  return (recorded.name ?? '') !== '' || (recorded.text ?? '') === seen.text;
}

export async function findRecordedElement(
  env: BrowserEnvironment,
  recorded: Recorded,
  input: TaskInput,
  coordinate: [number, number],
): Promise<FoundElement> {
  const { family, resized } = screenOf(input);
  const space = family.coordinateSpace === 'norm1000' ? NORM1000 : resizedPixelsSpace(resized.width, resized.height);
  const { viewport } = input;
  const read = async (x: number, y: number) =>
    (await readElement(env.page, { kind: 'point', x, y }, { space, viewport })).element;
  const at = modelToViewport(coordinate, space, viewport);
  const here = await read(at.x, at.y);
  if (here && sameElement(recorded, here)) return { kind: 'same' };

  const page = env.page;
  const candidates: [By, () => Locator | null][] = [
    [
      'selector',
      () =>
        recorded.selector && recorded.selector_unique && !recorded.within ? page.locator(recorded.selector) : null,
    ],
    [
      'role and name',
      () =>
        recorded.role && recorded.name
          ? page.getByRole(recorded.role as Parameters<typeof page.getByRole>[0], { name: recorded.name, exact: true })
          : null,
    ],
    ['text', () => (recorded.text ? page.getByText(recorded.text, { exact: true }) : null)],
  ];
  for (const [by, locate] of candidates) {
    const loc = locate();
    if (!loc || (await loc.count().catch(() => 0)) !== 1) continue;
    const box = await loc.boundingBox({ timeout: 1_000 }).catch(() => null);
    if (!box) continue;
    const x = box.x + box.width / 2;
    const y = box.y + box.height / 2;
    if (x < 0 || y < 0 || x >= viewport.width || y >= viewport.height) continue;
    const seen = await read(x, y);
    if (!seen || !sameElement(recorded, seen)) continue;
    const [mx, my] = viewportToModel({ x, y }, space, viewport);
    return { kind: 'moved', coordinate: [Math.round(mx), Math.round(my)], by };
  }
  const what = `${recorded.tag ?? 'element'}${recorded.name ? ` "${String(recorded.name).slice(0, 60)}"` : ''}`;
  return {
    kind: 'gone',
    why: `${what}: not at its recorded point, nor found in view by its selector, role and name, or text`,
  };
}

/** Whether the focused field is the recorded one (a `type` with no point types into whatever has the focus). */
export async function focusIsRecorded(env: BrowserEnvironment, recorded: Recorded, input: TaskInput): Promise<boolean> {
  const { family, resized } = screenOf(input);
  const space = family.coordinateSpace === 'norm1000' ? NORM1000 : resizedPixelsSpace(resized.width, resized.height);
  const seen = (await readElement(env.page, { kind: 'focus' }, { space, viewport: input.viewport })).element;
  return seen !== null && sameElement(recorded, seen);
}

/**
 * A recorded action checked against the live page by the element its act recorded: it `fits` (as recorded, or
 * healed: its point moved to where the element is now), the element is `gone`, or it recorded none to check by
 * (`unchecked`: keys, scrolls, answers; the caller compares screenshots).
 */
export type Fit =
  | { kind: 'fits'; action: ActionEvent; how: 'replayed' | 'healed'; note: Record<string, unknown> }
  | { kind: 'gone'; why: string }
  | { kind: 'unchecked' };

export async function fitRecordedAction(
  env: BrowserEnvironment,
  action: ActionEvent,
  element: Record<string, unknown> | null,
  input: TaskInput,
): Promise<Fit> {
  if (!element) return { kind: 'unchecked' };
  const point = action.content.arguments['coordinate'];
  if (Array.isArray(point) && point.length === 2) {
    const found = await findRecordedElement(env, element, input, point as [number, number]);
    if (found.kind === 'gone') return { kind: 'gone', why: `the element it hit is gone (${found.why})` };
    if (found.kind === 'same') return { kind: 'fits', action, how: 'replayed', note: {} };
    return {
      kind: 'fits',
      action: withCoordinate(action, found.coordinate),
      how: 'healed',
      note: { healed_from: point, found_by: found.by },
    };
  }
  if (element['source'] === 'focus') {
    return (await focusIsRecorded(env, element, input))
      ? { kind: 'fits', action, how: 'replayed', note: {} }
      : { kind: 'gone', why: 'the focused field is not the one it typed into' };
  }
  return { kind: 'unchecked' };
}

/** The recorded action with its point moved (healed). */
function withCoordinate(action: ActionEvent, coordinate: [number, number]): ActionEvent {
  return { ...action, content: { ...action.content, arguments: { ...action.content.arguments, coordinate } } };
}

/**
 * A recorded action as this step's: a new id and time, the model's output kept (the chat rebuilt from this run reads
 * it as the model's own) but its usage zeroed (no model was called), and how it was reused in `metadata.replay`.
 */
export function reusedEvent(req: StepRef, action: ActionEvent, replay: Record<string, unknown>): ActionEvent {
  const messages = action.llm_conversation.messages.map((m) => ({
    ...m,
    usage: { prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0 },
  }));
  const { inherited_from: _i, ...metadata } = (action.metadata ?? {}) as Record<string, unknown>;
  return {
    ...action,
    id: eventId({ step: req.step, kind: 'action', generation: req.generation }),
    timestamp: new Date().toISOString(),
    llm_conversation: { ...action.llm_conversation, messages },
    metadata: { ...metadata, replay },
  };
}
