// Whether this machine can run desktop sessions: the programs they need, and the apt-get line that installs them. In
// infra, below both of its users: the desktop sessions (src/desktop) and the setup check (tools.ts).
import { accessSync, constants, existsSync } from 'node:fs';
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
  const missing = missingPrograms(DESKTOP_BINARIES, searchPath);
  return { ok: missing.length === 0, missing, aptLine: DESKTOP_APT_LINE };
}

/** Programs a desktop takeover runs (x11vnc, websockify; noVNC's page is checked as a file, NOVNC_PAGE). */
export const VNC_BINARIES = ['x11vnc', 'websockify'] as const;
export const VNC_APT_LINE = 'apt-get install -y x11vnc websockify novnc';
/** Where Debian's novnc package puts noVNC's page. */
export const NOVNC_DIR = '/usr/share/novnc';

/** Whether this machine can share a desktop over VNC (a takeover): the programs and noVNC's page. */
export function vncSupport(searchPath: string = process.env.PATH ?? '/usr/bin:/bin'): DesktopSupport {
  const missing: string[] = missingPrograms(VNC_BINARIES, searchPath);
  if (!existsSync(path.join(NOVNC_DIR, 'vnc.html'))) missing.push('novnc');
  return { ok: missing.length === 0, missing, aptLine: VNC_APT_LINE };
}

/** The programs of `bins` not found as executables on `searchPath`. */
function missingPrograms(bins: readonly string[], searchPath: string): string[] {
  const dirs = searchPath.split(path.delimiter).filter((d) => d.length > 0);
  return bins.filter((bin) => !dirs.some((dir) => isExecutable(path.join(dir, bin))));
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
