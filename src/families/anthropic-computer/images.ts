// Screenshots as the Messages API takes them (a base64 image block from our data URLs), and the answer to a zoom:
// the region cropped from the screenshot the model is sent and enlarged to fit the screen, as the provider's own
// zoom shows a region larger. Our screenshot is all there is, so the zoom adds no detail the screenshot lacks.
import sharp from 'sharp';
import type { ScreenSize } from '../../actions/tool-schema';
import type { Region } from './actions';

export interface ImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string };
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/** A data URL as an image block. */
export function imageBlock(dataUrl: string): ImageBlock {
  const m = DATA_URL.exec(dataUrl);
  if (!m) throw new Error('a screenshot is not a base64 data URL');
  return { type: 'image', source: { type: 'base64', media_type: m[1] as string, data: m[2] as string } };
}

/** The region of a screenshot (a data URL, `screen` pixels), enlarged to fit the screen, as a PNG image block. */
export async function zoomBlock(dataUrl: string, region: Region, screen: ScreenSize): Promise<ImageBlock> {
  const shot = Buffer.from(imageBlock(dataUrl).source.data, 'base64');
  const meta = await sharp(shot).metadata();
  const width = meta.width ?? screen.width;
  const height = meta.height ?? screen.height;
  // The region is in screen pixels; the image should be the screen's size, but is scaled to it if not.
  const sx = width / screen.width;
  const sy = height / screen.height;
  const left = Math.min(width - 1, Math.max(0, Math.floor(region[0] * sx)));
  const top = Math.min(height - 1, Math.max(0, Math.floor(region[1] * sy)));
  const right = Math.min(width, Math.max(left + 1, Math.ceil(region[2] * sx)));
  const bottom = Math.min(height, Math.max(top + 1, Math.ceil(region[3] * sy)));
  const png = await sharp(shot)
    .extract({ left, top, width: right - left, height: bottom - top })
    .resize(screen.width, screen.height, { fit: 'inside', kernel: 'cubic' })
    .png()
    .toBuffer();
  return { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } };
}
