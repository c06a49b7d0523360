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
import { screenOf } from '../support';

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
  const { profile, resized } = screenOf(input);
  const space = profile.coordinateSpace === 'norm1000' ? NORM1000 : resizedPixelsSpace(resized.width, resized.height);
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
  const { profile, resized } = screenOf(input);
  const space = profile.coordinateSpace === 'norm1000' ? NORM1000 : resizedPixelsSpace(resized.width, resized.height);
  const seen = (await readElement(env.page, { kind: 'focus' }, { space, viewport: input.viewport })).element;
  return seen !== null && sameElement(recorded, seen);
}
