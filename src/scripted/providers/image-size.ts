// The size of a screenshot a request carried, read from its header: the one reader the provider stand-ins share
// (a PNG's IHDR through the desktop's pngSize, a JPEG's frame marker here). No image library: only the header.
import { pngSize } from '../../desktop/screenshot';

export interface ImageHeader {
  mediaType: 'image/png' | 'image/jpeg';
  width: number;
  height: number;
}

/** A JPEG's size from its first frame (SOF) marker, skipping fill bytes and markers without a length. */
function jpegSize(b: Buffer): { width: number; height: number } | null {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return null;
  for (let i = 2; i + 9 < b.length;) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1] as number;
    if (marker === 0xff) i += 1;
    else if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) i += 2;
    else if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      return { height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
    } else i += 2 + b.readUInt16BE(i + 2);
  }
  return null;
}

/** Width, height and type of a PNG or JPEG, from its header; null for anything else. */
export function readImageHeader(bytes: Buffer): ImageHeader | null {
  const png = pngSize(bytes);
  if (png) return { mediaType: 'image/png', ...png };
  const jpeg = jpegSize(bytes);
  return jpeg ? { mediaType: 'image/jpeg', ...jpeg } : null;
}
