// smart_resize as Qwen's vision processors compute it: the size a screenshot is resized to before it
// is sent to the model. Both sides become multiples of `factor` (patch size × merge size: 32 for
// Qwen3.5-based Fara-1.5, 28 for Qwen2.5-VL-based Fara-7B), the pixel count is kept inside
// [minPixels, maxPixels], and the aspect ratio changes as little as possible.
// Rounding follows Python's round() (halves go to the even neighbour), so results match the original.

/** Factor for Qwen3.5-based models (patch 16 × merge 2), e.g. Fara-1.5. */
export const QWEN35_FACTOR = 32;
/** Factor for Qwen2.5-VL-based models (patch 14 × merge 2), e.g. Fara-7B. */
export const QWEN25VL_FACTOR = 28;
/** Pixel bounds the Fara agents configure (56², and 3584²). */
export const DEFAULT_MIN_PIXELS = 3136;
export const DEFAULT_MAX_PIXELS = 12845056;
/** Longest side / shortest side beyond which the processors refuse an image. */
export const MAX_ASPECT_RATIO = 200;

export type SmartResizeOptions = { factor: number; minPixels?: number; maxPixels?: number };
export type Size = { height: number; width: number };

/** Thrown for an image the model's processor would refuse (extreme aspect ratio, empty size). */
export class SmartResizeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Target size for a `height`×`width` image. */
export function smartResize(height: number, width: number, options: SmartResizeOptions): Size {
  const { factor, minPixels = DEFAULT_MIN_PIXELS, maxPixels = DEFAULT_MAX_PIXELS } = options;
  checkInputs(height, width, factor, minPixels, maxPixels);
  const ratio = Math.max(height, width) / Math.min(height, width);
  if (ratio > MAX_ASPECT_RATIO) {
    throw new SmartResizeError(`aspect ratio ${ratio} is above the limit of ${MAX_ASPECT_RATIO} (${width}×${height})`);
  }
  let h = Math.max(factor, roundHalfEven(height / factor) * factor);
  let w = Math.max(factor, roundHalfEven(width / factor) * factor);
  if (h * w > maxPixels) {
    const shrink = Math.sqrt((height * width) / maxPixels);
    h = Math.max(factor, Math.floor(height / shrink / factor) * factor);
    w = Math.max(factor, Math.floor(width / shrink / factor) * factor);
  } else if (h * w < minPixels) {
    const grow = Math.sqrt(minPixels / (height * width));
    h = Math.ceil((height * grow) / factor) * factor;
    w = Math.ceil((width * grow) / factor) * factor;
  }
  return { height: h, width: w };
}

/** Python 3's round(): nearest integer, exact halves to the even neighbour. */
export function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff < 0.5) return floor;
  if (diff > 0.5) return floor + 1;
  return floor % 2 === 0 ? floor : floor + 1;
}

function checkInputs(height: number, width: number, factor: number, minPixels: number, maxPixels: number): void {
  const positive = (n: number) => Number.isFinite(n) && n > 0;
  if (!positive(height) || !positive(width)) {
    throw new SmartResizeError(`image size must be positive, got ${width}×${height}`);
  }
  if (!Number.isInteger(factor) || factor <= 0)
    throw new SmartResizeError(`factor must be a positive integer: ${factor}`);
  if (!positive(minPixels) || !positive(maxPixels) || minPixels > maxPixels) {
    throw new SmartResizeError(`pixel bounds must satisfy 0 < min <= max, got min=${minPixels} max=${maxPixels}`);
  }
}
