// Screenshots of a session's display: scrot takes a PNG of the whole screen.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DesktopCommandError } from './errors';
import { runHelper } from './exec';
import type { Screen } from './input';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from a PNG's IHDR chunk (undefined when the bytes are not a PNG). */
export function pngSize(png: Buffer): { width: number; height: number } | undefined {
  if (png.length < 24 || !png.subarray(0, 8).equals(PNG_SIGNATURE)) return undefined;
  if (png.toString('ascii', 12, 16) !== 'IHDR') return undefined;
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/**
 * A PNG of the whole screen; throws DesktopCommandError when scrot fails or the size is not the screen's. scrot
 * writes to a file in a private temporary folder: its "-" (stdout) opens /dev/stdout, which fails on Node's pipes
 * (they are sockets).
 */
export async function captureScreen(screen: Screen): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cua-shot-'));
  let png: Buffer;
  try {
    const file = path.join(dir, 'screen.png');
    await runHelper('scrot', ['--overwrite', '--silent', file], { display: screen.name, timeoutMs: 15_000 });
    png = await readFile(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const size = pngSize(png);
  if (!size) throw new DesktopCommandError(`scrot on ${screen.name} did not produce a PNG (${png.length} bytes)`);
  if (size.width !== screen.width || size.height !== screen.height) {
    throw new DesktopCommandError(
      `screenshot of ${screen.name} is ${size.width}x${size.height}, expected ${screen.width}x${screen.height}`,
    );
  }
  return png;
}
