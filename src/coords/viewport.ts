// Coordinate spaces: the one place where model coordinates and browser viewport pixels are converted.
//
// Two spaces exist:
// - 'norm1000' (Fara-1.5): the prompt tells the model the screen is 1000×1000, whatever the viewport.
// - 'resized-pixels' (Fara-7B): the model speaks pixels of the screenshot it was shown, i.e. the
//   smart_resize'd image (e.g. 1440×896 for a 1440×900 viewport).
// Conversions are plain proportional scaling, as in the original: no rounding and no clamping, so a
// model answer slightly outside the screen stays outside (the browser layer decides what to do).
// Scroll amounts are the exception: they are truncated to whole pixels toward zero, as the original does.

/** Size of the browser viewport in CSS pixels. */
export type Viewport = { readonly width: number; readonly height: number };

/** The coordinate space a model speaks. */
export type CoordinateSpace =
  { readonly kind: 'norm1000' } | { readonly kind: 'resized-pixels'; readonly width: number; readonly height: number };

/** A point in viewport pixels. */
export type ViewportPoint = { x: number; y: number };

/** A point as the model writes it: `[x, y]`. */
export type ModelPoint = readonly [number, number];

export type ScrollAxis = 'vertical' | 'horizontal';

/** Side length of Fara-1.5's fixed model space. */
export const NORM_DISPLAY_SIZE = 1000;

/** Fara-1.5's space (fixed 1000×1000). */
export const NORM1000: CoordinateSpace = { kind: 'norm1000' };

/** Fara-7B's space: pixels of a screenshot resized to `width`×`height`. */
export function resizedPixelsSpace(width: number, height: number): CoordinateSpace {
  return { kind: 'resized-pixels', width, height };
}

/** Thrown when a conversion gets a non-finite coordinate or a degenerate size. */
export class CoordinateError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Convert a model coordinate to viewport pixels. */
export function modelToViewport(p: ModelPoint, space: CoordinateSpace, viewport: Viewport): ViewportPoint {
  const [x, y] = p;
  assertFinite(x, y);
  const s = spaceSize(space);
  const v = checkedSize(viewport, 'viewport');
  return { x: (x * v.width) / s.width, y: (y * v.height) / s.height };
}

/** Convert viewport pixels to a model coordinate (the inverse of {@link modelToViewport}). */
export function viewportToModel(p: ViewportPoint, space: CoordinateSpace, viewport: Viewport): [number, number] {
  assertFinite(p.x, p.y);
  const s = spaceSize(space);
  const v = checkedSize(viewport, 'viewport');
  return [(p.x * s.width) / v.width, (p.y * s.height) / v.height];
}

/**
 * Convert a model scroll amount to viewport pixels (positive = up / left, as the model is told).
 *
 * norm1000: the amount is in thousandths of the viewport: vertical scales by height/1000, horizontal
 * by width/1000; both the input and the result are truncated toward zero, as the original does.
 * resized-pixels: Fara-7B only pages up or down by the sign, so the amount passes through (truncated).
 */
export function scaleScroll(amount: number, axis: ScrollAxis, space: CoordinateSpace, viewport: Viewport): number {
  if (!Number.isFinite(amount)) throw new CoordinateError(`scroll amount must be a finite number, got ${amount}`);
  const whole = Math.trunc(amount);
  if (space.kind === 'resized-pixels') return whole + 0;
  const v = checkedSize(viewport, 'viewport');
  const extent = axis === 'vertical' ? v.height : v.width;
  // `+ 0` turns -0 into 0 so callers and tests never see a negative zero.
  return Math.trunc((whole * extent) / NORM_DISPLAY_SIZE) + 0;
}

function spaceSize(space: CoordinateSpace): Viewport {
  if (space.kind === 'norm1000') return { width: NORM_DISPLAY_SIZE, height: NORM_DISPLAY_SIZE };
  return checkedSize(space, 'resized screenshot');
}

function checkedSize(size: Viewport, what: string): Viewport {
  const ok = (n: number) => Number.isFinite(n) && n > 0;
  if (!ok(size.width) || !ok(size.height)) {
    throw new CoordinateError(`${what} size must be positive, got ${size.width}×${size.height}`);
  }
  return size;
}

function assertFinite(x: number, y: number): void {
  if (!Number.isFinite(x) || !Number.isFinite(y)) {
    throw new CoordinateError(`coordinate must be two finite numbers, got [${x}, ${y}]`);
  }
}
