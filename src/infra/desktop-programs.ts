// Whether this machine can run desktop sessions: the programs they need, and the apt-get line that installs them. In
// infra, below both of its users: the desktop sessions (src/desktop) and the setup check (tools.ts).
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/**
 * Programs a desktop session runs (nsenter, setpriv and unshare come with util-linux; unshare, mount and chown start
 * a root worker's sandboxes as their own host user).
 */
export const DESKTOP_BINARIES = [
  'Xvfb',
  'xdotool',
  'openbox',
  'xterm',
  'scrot',
  'bwrap',
  'nsenter',
  'setpriv',
  'unshare',
  'mount',
  'chown',
  'xmessage',
  'xprop',
] as const;

export const DESKTOP_APT_LINE = 'apt-get install -y xvfb xdotool openbox xterm mousepad scrot bubblewrap x11-utils';

export type DesktopSupport = { ok: boolean; missing: string[]; aptLine: string };

/** Looks each program up on PATH (no process is started). */
export function desktopSupport(searchPath: string = process.env.PATH ?? '/usr/bin:/bin'): DesktopSupport {
  const dirs = searchPath.split(path.delimiter).filter((d) => d.length > 0);
  const missing = DESKTOP_BINARIES.filter((bin) => !dirs.some((dir) => isExecutable(path.join(dir, bin))));
  return { ok: missing.length === 0, missing, aptLine: DESKTOP_APT_LINE };
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
