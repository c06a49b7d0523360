import { describe, it, expect } from 'vitest';
import {
  CoordinateError,
  modelToViewport,
  NORM1000,
  resizedPixelsSpace,
  scaleScroll,
  viewportToModel,
  type ModelPoint,
  type ScrollAxis,
  type Viewport,
} from '../../src/coords/viewport';

const VIEWPORT: Viewport = { width: 1440, height: 900 };
const FARA7B = resizedPixelsSpace(1440, 896);

describe('Fara-1.5 norm1000 space', () => {
  it.each<[ModelPoint, number, number]>([
    [[500, 500], 720, 450],
    [[1000, 1000], 1440, 900],
    [[0, 0], 0, 0],
    [[500, 340], 720, 306],
    [[250, 750], 360, 675],
    [[333, 1], 479.52, 0.9], // no rounding, as the original
    [[1005, -3], 1447.2, -2.7], // no clamping, as the original
  ])('model %j → viewport (%d, %d)', (p, x, y) => {
    const v = modelToViewport(p, NORM1000, VIEWPORT);
    expect(v.x).toBeCloseTo(x, 9);
    expect(v.y).toBeCloseTo(y, 9);
  });

  it.each<[number, number, ModelPoint]>([
    [720, 450, [500, 500]],
    [1440, 900, [1000, 1000]],
    [360, 675, [250, 750]],
  ])('viewport (%d, %d) → model %j', (x, y, expected) => {
    const [mx, my] = viewportToModel({ x, y }, NORM1000, VIEWPORT);
    expect(mx).toBeCloseTo(expected[0], 9);
    expect(my).toBeCloseTo(expected[1], 9);
  });

  it('uses the viewport it is given (1280×720)', () => {
    expect(modelToViewport([500, 500], NORM1000, { width: 1280, height: 720 })).toEqual({ x: 640, y: 360 });
  });
});

describe('Fara-7B resized-pixels space', () => {
  it.each<[ModelPoint, number, number]>([
    [[720, 448], 720, 450],
    [[1440, 896], 1440, 900],
    [[100, 200], 100, 200.89285714285714],
  ])('model %j on a 1440×896 screenshot → viewport (%d, %d)', (p, x, y) => {
    const v = modelToViewport(p, FARA7B, VIEWPORT);
    expect(v.x).toBeCloseTo(x, 9);
    expect(v.y).toBeCloseTo(y, 9);
  });

  it('round-trips through viewportToModel', () => {
    const [mx, my] = viewportToModel(modelToViewport([123, 456], FARA7B, VIEWPORT), FARA7B, VIEWPORT);
    expect(mx).toBeCloseTo(123, 9);
    expect(my).toBeCloseTo(456, 9);
  });
});

describe('scaleScroll', () => {
  it.each<[number, ScrollAxis, number]>([
    [500, 'vertical', 450], // × 900/1000
    [-500, 'vertical', -450], // sign kept: negative = down
    [1000, 'horizontal', 1440], // × 1440/1000
    [-300, 'horizontal', -432],
    [333, 'vertical', 299], // 299.7 truncated toward zero
    [-333, 'vertical', -299], // toward zero, not floor
    [10.9, 'vertical', 9], // input truncated first: 10 × 0.9
    [0, 'horizontal', 0],
  ])('norm1000: %d (%s) → %d px', (amount, axis, expected) => {
    expect(scaleScroll(amount, axis, NORM1000, VIEWPORT)).toBe(expected);
  });

  it.each<[number, number]>([
    [500, 500],
    [-240.7, -240],
  ])('resized-pixels: %d passes through as %d', (amount, expected) => {
    expect(scaleScroll(amount, 'vertical', FARA7B, VIEWPORT)).toBe(expected);
  });
});

describe('bad input', () => {
  it.each<[string, () => unknown]>([
    ['NaN coordinate', () => modelToViewport([Number.NaN, 1], NORM1000, VIEWPORT)],
    ['zero viewport', () => modelToViewport([1, 1], NORM1000, { width: 0, height: 900 })],
    ['zero resized size', () => modelToViewport([1, 1], resizedPixelsSpace(0, 896), VIEWPORT)],
    ['infinite scroll', () => scaleScroll(Infinity, 'vertical', NORM1000, VIEWPORT)],
  ])('%s throws CoordinateError', (_name, call) => {
    expect(call).toThrow(CoordinateError);
    try {
      call();
    } catch (error) {
      expect((error as Error).name).toBe('CoordinateError');
    }
  });
});
