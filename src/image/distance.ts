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

/** The default largest distance that still counts as the same page (measured: see bench/ and the README). */
export const DEFAULT_MAX_DISTANCE = 0.05;
