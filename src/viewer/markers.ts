// Where an action's marker goes on a step's screenshot, in the screenshot's pixels.
//
// The action events keep only the model's coordinates, so the pixel position is recomputed here exactly as the
// dispatcher does (modelToViewport with the run's profile and viewport from task.json), then scaled from viewport
// pixels to screenshot pixels (the same numbers unless the screenshot was taken at another scale).
// A drag starts wherever the pointer was left: the viewer follows the pointer from step to step to draw it.
// A desktop call's target is in screen pixels (the tool output's resolved point), scaled to the screenshot.
import { z } from 'zod';
import { familyOf } from '../families/registry';
import type { CoordinateSpace, Viewport } from '../coords/viewport';
import { NORM1000, modelToViewport, resizedPixelsSpace, scaleScroll } from '../coords/viewport';
import { smartResize } from '../image/smart-resize';
import type { CallTarget } from './desktop';

export interface Point {
  x: number;
  y: number;
}

export interface Size {
  width: number;
  height: number;
}

export type ScrollDirection = 'up' | 'down' | 'left' | 'right';

/** What to draw on a screenshot, in its pixels. Arrow heads are triangles (tip first). */
export type Marker =
  | { kind: 'point'; at: Point }
  | { kind: 'drag'; from: Point | null; to: Point; head: Point[] }
  | { kind: 'scroll'; at: Point; to: Point; head: Point[]; direction: ScrollDirection };

/** How model coordinates map onto a screenshot. */
export interface Geometry {
  space: CoordinateSpace;
  viewport: Viewport;
  /** Pixel size of the screenshot the marker is drawn on. */
  image: Size;
}

const DRAG_ACTIONS: ReadonlySet<string> = new Set(['left_click_drag', 'drag']);
const SCROLL_AXES: Readonly<Record<string, 'vertical' | 'horizontal'>> = { scroll: 'vertical', hscroll: 'horizontal' };

const CoordinateArg = z.tuple([z.number(), z.number()]);

/** The model-space `[x, y]` of an argument, when it is one. */
export function coordinateOf(value: unknown): [number, number] | null {
  const parsed = CoordinateArg.safeParse(value);
  return parsed.success && parsed.data.every(Number.isFinite) ? parsed.data : null;
}

/** A model coordinate in screenshot pixels. */
export function toImagePoint(coordinate: readonly [number, number], geo: Geometry): Point {
  const p = modelToViewport(coordinate, geo.space, geo.viewport);
  return { x: (p.x * geo.image.width) / geo.viewport.width, y: (p.y * geo.image.height) / geo.viewport.height };
}

/** The arrow head at `to` of a line from `from`: a triangle, tip first. */
export function arrowHead(from: Point, to: Point, size: number): Point[] {
  const length = Math.hypot(to.x - from.x, to.y - from.y);
  if (length === 0) return [];
  const ux = (to.x - from.x) / length;
  const uy = (to.y - from.y) / length;
  const base = { x: to.x - ux * size, y: to.y - uy * size };
  const half = size * 0.6;
  return [to, { x: base.x - uy * half, y: base.y + ux * half }, { x: base.x + uy * half, y: base.y - ux * half }];
}

const headSize = (image: Size) => Math.max(14, image.width / 48);

function scrollMarker(
  axis: 'vertical' | 'horizontal',
  args: Record<string, unknown>,
  geo: Geometry,
): Extract<Marker, { kind: 'scroll' }> | null {
  const pixels = typeof args['pixels'] === 'number' ? args['pixels'] : NaN;
  if (!Number.isFinite(pixels) || Math.trunc(pixels) === 0) return null;
  const coordinate = coordinateOf(args['coordinate']);
  const at = coordinate ? toImagePoint(coordinate, geo) : { x: geo.image.width / 2, y: geo.image.height / 2 };
  // The model's positive amounts scroll up / left.
  const direction: ScrollDirection = axis === 'vertical' ? (pixels > 0 ? 'up' : 'down') : pixels > 0 ? 'left' : 'right';
  const extent = axis === 'vertical' ? geo.image.height : geo.image.width;
  const scale = axis === 'vertical' ? geo.image.height / geo.viewport.height : geo.image.width / geo.viewport.width;
  const amount = Math.abs(scaleScroll(pixels, axis, geo.space, geo.viewport)) * scale;
  const length = Math.min(Math.max(amount, extent * 0.08), extent * 0.3);
  const sign = direction === 'up' || direction === 'left' ? -1 : 1;
  const to = axis === 'vertical' ? { x: at.x, y: at.y + sign * length } : { x: at.x + sign * length, y: at.y };
  return { kind: 'scroll', at, to, head: arrowHead(at, to, headSize(geo.image)), direction };
}

/**
 * The marker for an action, in screenshot pixels, or null when it has nothing to show on the page (typing into the
 * focused element, navigation, answers …). `pointer`: where the previous pointer action left the mouse (a drag's
 * start), in screenshot pixels.
 */
export function markerFor(
  actionName: string,
  args: Record<string, unknown>,
  geo: Geometry,
  pointer: Point | null = null,
): Marker | null {
  const axis = SCROLL_AXES[actionName];
  if (axis) return scrollMarker(axis, args, geo);
  const coordinate = coordinateOf(args['coordinate']);
  if (!coordinate) return null;
  const to = toImagePoint(coordinate, geo);
  if (DRAG_ACTIONS.has(actionName)) {
    const start = coordinateOf(args['start_coordinate']);
    const from = start ? toImagePoint(start, geo) : pointer;
    return { kind: 'drag', from, to, head: from ? arrowHead(from, to, headSize(geo.image)) : [] };
  }
  // Every other action with a target point (clicks, moves, hover, Fara-7B's type-at) marks that point.
  return { kind: 'point', at: to };
}

/** Where the pointer is after a marker's action (unchanged for scrolls and actions without a marker). */
export function pointerAfter(marker: Marker | null, before: Point | null): Point | null {
  if (marker?.kind === 'point' || marker?.kind === 'drag') return marker.kind === 'point' ? marker.at : marker.to;
  return before;
}

/** The coordinate space the family's model speaks for this viewport (as the dispatcher converts it). */
export function spaceOf(profile: string, viewport: Viewport): CoordinateSpace {
  const p = familyOf(profile);
  if (p.coordinateSpace === 'norm1000') return NORM1000;
  const resized = smartResize(viewport.height, viewport.width, {
    factor: p.resizeFactor,
    ...(p.maxPixels ? { maxPixels: p.maxPixels } : {}),
  });
  return resizedPixelsSpace(resized.width, resized.height);
}

/** A desktop call's target (screen pixels) as a marker on a screenshot of `image` pixels. */
export function desktopMarker(target: CallTarget, screen: Size, image: Size): Marker {
  const scale = (p: Point): Point => ({
    x: (p.x * image.width) / screen.width,
    y: (p.y * image.height) / screen.height,
  });
  if (target.kind === 'point') return { kind: 'point', at: scale(target.at) };
  const from = scale(target.from);
  const to = scale(target.to);
  return { kind: 'drag', from, to, head: arrowHead(from, to, headSize(image)) };
}
