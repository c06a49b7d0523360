// A screenshot scaled down to fit a long edge (for a caller that shows it to a model, not for the agent's own model
// input, which smart-resize.ts sizes): the aspect ratio kept, never enlarged, encoded as PNG.
import sharp from 'sharp';

export interface FittedImage {
  data: Buffer;
  mime: 'image/png';
  width: number;
  height: number;
}

/** `image` (any format sharp reads) scaled so that its longer edge is at most `longEdge` pixels. */
export async function fitLongEdge(image: Buffer, longEdge: number): Promise<FittedImage> {
  const { data, info } = await sharp(image)
    .resize({ width: longEdge, height: longEdge, fit: 'inside', withoutEnlargement: true })
    .png()
    .toBuffer({ resolveWithObject: true });
  return { data, mime: 'image/png', width: info.width, height: info.height };
}
