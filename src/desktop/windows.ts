// The windows on a display: the window manager's list of managed top-level windows (EWMH _NET_CLIENT_LIST),
// keeping those that are visible, with their titles. Read with xprop and xdotool from the worker.
import { runHelper } from './exec';

export type DesktopWindow = { id: string; title: string };

/** Window ids in an xprop line such as `_NET_CLIENT_LIST(WINDOW): window id # 0x40000c, 0x60000c`. */
export function parseWindowIds(xpropLine: string): number[] {
  return [...xpropLine.matchAll(/0x[0-9a-f]+/gi)].map((m) => Number.parseInt(m[0], 16));
}

/** True once a window manager has announced itself on the root window. */
export async function windowManagerRunning(display: string): Promise<boolean> {
  const out = await runHelper('xprop', ['-root', '_NET_SUPPORTING_WM_CHECK'], { display, timeoutMs: 3000 });
  return /window id #/.test(out.toString('utf8'));
}

/**
 * Visible top-level windows in stacking order of the window manager's list. Without a window manager, the named
 * visible children of the root window.
 */
export async function listWindows(display: string): Promise<DesktopWindow[]> {
  const managed = parseWindowIds(
    (await runHelper('xprop', ['-root', '_NET_CLIENT_LIST'], { display, timeoutMs: 3000 })).toString('utf8'),
  );
  const visible = new Set(await searchVisible(display, managed.length > 0 ? [] : ['--maxdepth', '1']));
  const ids = managed.length > 0 ? managed.filter((id) => visible.has(id)) : [...visible];
  const windows: DesktopWindow[] = [];
  for (const id of ids) {
    const title = await windowTitle(display, id);
    if (title !== undefined) windows.push({ id: `0x${id.toString(16)}`, title });
  }
  return managed.length > 0 ? windows : windows.filter((w) => w.title !== '');
}

async function searchVisible(display: string, extra: string[]): Promise<number[]> {
  try {
    const out = await runHelper('xdotool', ['search', ...extra, '--onlyvisible', '--name', ''], { display });
    return out
      .toString('utf8')
      .split('\n')
      .filter((line) => /^\d+$/.test(line))
      .map(Number);
  } catch {
    return []; // xdotool search exits 1 when nothing matches
  }
}

/** The window's title, or undefined when it vanished meanwhile. */
async function windowTitle(display: string, id: number): Promise<string | undefined> {
  try {
    const out = await runHelper('xdotool', ['getwindowname', String(id)], { display, timeoutMs: 3000 });
    return out.toString('utf8').replace(/\n$/, '');
  } catch {
    return undefined;
  }
}
