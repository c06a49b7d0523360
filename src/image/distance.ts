// A perceptual distance between two screenshots (a replay's check that the page still looks as recorded): both
// reduced to a small grey thumbnail (64×40, the aspect of a typical viewport, so a layout shift shows and a font's
// anti-aliasing does not), then the mean absolute difference of their pixels, 0 (the same) to 1 (black against
// white). A few milliseconds per pair.
import sharp from 'sharp';

const WIDTH = 64;
const HEIGHT = 40;

async function thumbnail(png: Buffer): Promise<Buffer> {
  return sharp(png).greyscale().resize(WIDTH, HEIGHT, { fit: 'fill' }).raw().toBuffer();
}

/** The distance (0…1) between two screenshots. */
export async function screenDistance(a: Buffer, b: Buffer): Promise<number> {
  const [x, y] = await Promise.all([thumbnail(a), thumbnail(b)]);
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += Math.abs((x[i] ?? 0) - (y[i] ?? 0));
  return sum / (x.length * 255);
}

/** The default largest distance that still counts as the same page (measured: see bench/README.md). */
export const DEFAULT_MAX_DISTANCE = 0.05;

/**
 * A perceptual hash of a screenshot (dHash, 256 bits as 64 hex digits): a 17×16 grey thumbnail, one bit per pair of
 * neighbours (is the left one brighter). The same page gives the same hash through a caret's blink or a font's
 * anti-aliasing; a layout that moved, or other content, gives another.
 */
export async function screenHash(png: Buffer): Promise<string> {
  const px = await sharp(png).greyscale().resize(17, 16, { fit: 'fill' }).raw().toBuffer();
  let hex = '';
  for (let y = 0; y < 16; y++) {
    for (let x = 0; x < 16; x += 4) {
      let nibble = 0;
      for (let b = 0; b < 4; b++) {
        const i = y * 17 + x + b;
        nibble = (nibble << 1) | ((px[i] ?? 0) > (px[i + 1] ?? 0) ? 1 : 0);
      }
      hex += nibble.toString(16);
    }
  }
  return hex;
}
