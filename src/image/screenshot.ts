// Screenshot preparation for the model: resize a viewport screenshot to its smart_resize size and
// encode it (PNG, or JPEG with a quality), plus the data-URL form OpenAI-compatible servers accept.
// Pure bytes in, bytes out: no file I/O here.
import sharp from 'sharp';
import { smartResize, SmartResizeError } from './smart-resize';

export type ImageMime = 'image/png' | 'image/jpeg';

export type ResizeScreenshotOptions = {
  /** Output encoding (default 'png'). */
  format?: 'png' | 'jpeg';
  /** JPEG quality 1–100 (default 85); ignored for PNG. */
  quality?: number;
  minPixels?: number;
  maxPixels?: number;
};

export type ResizedScreenshot = {
  data: Buffer;
  /** Size of the resized image: for Fara-7B this is the model's coordinate space. */
  width: number;
  height: number;
  mime: ImageMime;
  /** Size of the input screenshot (normally the viewport). */
  originalWidth: number;
  originalHeight: number;
};

const DEFAULT_JPEG_QUALITY = 85;

/** Resize `png` (any format sharp reads) to its smart_resize size for `factor`, then encode it. */
export async function resizeScreenshot(
  png: Buffer,
  factor: number,
  options: ResizeScreenshotOptions = {},
): Promise<ResizedScreenshot> {
  const { width: originalWidth, height: originalHeight } = await readSize(png);
  const target = smartResize(originalHeight, originalWidth, {
    factor,
    minPixels: options.minPixels,
    maxPixels: options.maxPixels,
  });
  let pipeline = sharp(png);
  if (target.width !== originalWidth || target.height !== originalHeight) {
    // 'fill' stretches to the exact size, as PIL's resize does; the aspect change is a few pixels.
    pipeline = pipeline.resize(target.width, target.height, { fit: 'fill', kernel: 'cubic' });
  }
  const format = options.format ?? 'png';
  const data =
    format === 'jpeg'
      ? await pipeline.jpeg({ quality: options.quality ?? DEFAULT_JPEG_QUALITY }).toBuffer()
      : await pipeline.png().toBuffer();
  const mime: ImageMime = format === 'jpeg' ? 'image/jpeg' : 'image/png';
  return { data, width: target.width, height: target.height, mime, originalWidth, originalHeight };
}

/** `data:<mime>;base64,<bytes>`. */
export function toDataUrl(buf: Buffer, mime: string): string {
  return `data:${mime};base64,${buf.toString('base64')}`;
}

async function readSize(image: Buffer): Promise<{ width: number; height: number }> {
  const meta = await sharp(image)
    .metadata()
    .catch((cause: unknown) => {
      throw new SmartResizeError('screenshot bytes are not a readable image', { cause });
    });
  if (!meta.width || !meta.height) throw new SmartResizeError('screenshot has no width/height');
  return { width: meta.width, height: meta.height };
}
