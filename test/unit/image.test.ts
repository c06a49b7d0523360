import { describe, it, expect } from 'vitest';
import sharp from 'sharp';
import {
  QWEN25VL_FACTOR,
  QWEN35_FACTOR,
  roundHalfEven,
  smartResize,
  SmartResizeError,
  type SmartResizeOptions,
} from '../../src/image/smart-resize';
import { resizeScreenshot, toDataUrl } from '../../src/image/screenshot';

describe('smartResize', () => {
  // Expected values cross-checked against a Python run of Qwen's smart_resize.
  it.each<[number, number, SmartResizeOptions, number, number]>([
    [900, 1440, { factor: QWEN35_FACTOR }, 896, 1440],
    [900, 1440, { factor: QWEN25VL_FACTOR }, 896, 1428],
    [720, 1280, { factor: 28 }, 728, 1288],
    [2160, 3840, { factor: 32 }, 2176, 3840],
    [80, 80, { factor: 32 }, 64, 64], // 2.5 rounds to 2 (half to even), not 3
    [10, 10, { factor: 28 }, 56, 56], // grown to reach minPixels
    [4000, 4000, { factor: 32 }, 3584, 3584], // shrunk to fit maxPixels
    [900, 1440, { factor: 28, maxPixels: 1003520 }, 784, 1260], // Qwen2.5-VL processor default max
    [10, 2000, { factor: 32 }, 32, 1984], // ratio exactly 200 is allowed
    [1, 200, { factor: 28 }, 28, 196],
  ])('%d×%d (h×w) %j → %d×%d', (h, w, options, eh, ew) => {
    expect(smartResize(h, w, options)).toEqual({ height: eh, width: ew });
  });

  it.each<[number, number]>([
    [10, 2001],
    [3000, 10],
  ])('refuses an aspect ratio above 200 (%d×%d)', (h, w) => {
    expect(() => smartResize(h, w, { factor: 32 })).toThrow(SmartResizeError);
    expect(() => smartResize(h, w, { factor: 32 })).toThrow(/aspect ratio/);
  });

  it.each<[string, () => unknown]>([
    ['zero height', () => smartResize(0, 100, { factor: 32 })],
    ['bad factor', () => smartResize(100, 100, { factor: 0 })],
    ['min above max', () => smartResize(100, 100, { factor: 32, minPixels: 10, maxPixels: 5 })],
  ])('rejects %s', (_name, call) => {
    expect(call).toThrow(SmartResizeError);
  });

  it.each<[number, number]>([
    [0.5, 0],
    [1.5, 2],
    [2.5, 2],
    [28.125, 28],
    [2.51, 3],
    [-0.5, 0],
    [-1.5, -2],
  ])('roundHalfEven(%d) = %d', (x, expected) => {
    expect(roundHalfEven(x)).toBe(expected);
  });
});

async function viewportPng(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 30, g: 120, b: 200 } } })
    .png()
    .toBuffer();
}

describe('resizeScreenshot (real sharp)', () => {
  it('resizes a 1440×900 PNG to 1440×896 for Qwen3.5 and stays PNG', async () => {
    const out = await resizeScreenshot(await viewportPng(1440, 900), QWEN35_FACTOR);
    expect(out).toMatchObject({
      width: 1440,
      height: 896,
      mime: 'image/png',
      originalWidth: 1440,
      originalHeight: 900,
    });
    const meta = await sharp(out.data).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 1440, 896]);
  });

  it('resizes to 1428×896 for Qwen2.5-VL and encodes JPEG with the given quality', async () => {
    const png = await viewportPng(1440, 900);
    const low = await resizeScreenshot(png, QWEN25VL_FACTOR, { format: 'jpeg', quality: 20 });
    const high = await resizeScreenshot(png, QWEN25VL_FACTOR, { format: 'jpeg', quality: 95 });
    expect(low).toMatchObject({ width: 1428, height: 896, mime: 'image/jpeg' });
    const meta = await sharp(low.data).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 1428, 896]);
    expect(low.data.length).toBeLessThanOrEqual(high.data.length);
  });

  it('keeps an already-fitting image at its size', async () => {
    const out = await resizeScreenshot(await viewportPng(1280, 704), 32);
    expect([out.width, out.height]).toEqual([1280, 704]);
  });

  it('fails clearly on bytes that are not an image', async () => {
    await expect(resizeScreenshot(Buffer.from('not an image'), 32)).rejects.toThrow(SmartResizeError);
  });
});

describe('toDataUrl', () => {
  it('base64-encodes with the mime type', () => {
    expect(toDataUrl(Buffer.from('hi'), 'image/png')).toBe('data:image/png;base64,aGk=');
  });
});
