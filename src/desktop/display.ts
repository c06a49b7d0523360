// One Xvfb display per session, listening only on its filesystem socket /tmp/.X11-unix/X<n> (no TCP, no abstract
// socket: `-nolisten tcp -nolisten local`), which is what the sandbox binds.
//
// Why not `-displayfd` to let Xvfb pick the number: with -displayfd, Xvfb takes no /tmp/.X<n>-lock and finds a free
// number only by failing to bind a socket. Without the abstract socket nothing fails (the filesystem socket is
// unlinked and re-bound), so two Xvfb started at once both take :0 and the second silently steals the first's
// socket (seen here with Xorg 1.21). So we pick the number: skip those with a lock file or socket, start
// `Xvfb :<n>`, whose lock (created atomically with link()) makes a concurrent second server exit with "Server is
// already active", and then try the next number.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { drained, isRunning, signal, stopChild, tailLines } from './child';
import { DesktopUnavailableError } from './errors';
import { runHelper } from './exec';
import { pollUntil } from './wait';

export type DisplayOptions = {
  width: number;
  height: number;
  /** How long Xvfb may take to answer (default 10 s). */
  startTimeoutMs?: number;
  log?: (line: string) => void;
};

export const X11_SOCKET_DIR = '/tmp/.X11-unix';
/** Display numbers tried, lowest first (below 10 is left to people's own X servers). */
const FIRST_DISPLAY = 10;
const LAST_DISPLAY = 1000;
const MAX_ATTEMPTS = 20;
/** Numbers this process is starting or running a display on. */
const claimed = new Set<number>();

export class XDisplay {
  /** ":<n>", the value of DISPLAY. */
  readonly name: string;
  /** The display's socket on the host, bound into the sandbox at the same path. */
  readonly socketPath: string;

  constructor(
    readonly number: number,
    readonly width: number,
    readonly height: number,
    private readonly server: ChildProcess,
  ) {
    this.name = `:${number}`;
    this.socketPath = socketPath(number);
  }

  get pid(): number | undefined {
    return this.server.pid;
  }

  alive(): boolean {
    return isRunning(this.server);
  }

  /** Stops Xvfb (SIGTERM so it removes its socket and lock file; SIGKILL if it hangs). Never throws. */
  async stop(): Promise<void> {
    await stopChild(this.server);
    claimed.delete(this.number);
  }

  /** Synchronous last resort for process exit hooks: SIGTERM, so Xvfb still removes its lock and socket. */
  killNow(): void {
    signal(this.server, 'SIGTERM');
  }
}

/**
 * Starts `Xvfb :<n> -screen 0 WxHx24 -nolisten tcp -nolisten local -noreset` on a free number and waits until it
 * answers with the expected geometry. Xvfb runs under `setpriv --pdeathsig TERM`, so it ends (cleanly, removing its
 * lock and socket) with this Node process even when no exit hook runs (SIGKILL of the worker).
 */
export async function startDisplay(options: DisplayOptions): Promise<XDisplay> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const number = nextFreeNumber();
    claimed.add(number);
    let display: XDisplay | undefined;
    try {
      display = await tryDisplay(number, options);
    } finally {
      if (!display) claimed.delete(number);
    }
    if (display) return display;
    options.log?.(`[display] :${number} was taken meanwhile; trying another number`);
  }
  throw new DesktopUnavailableError(`Xvfb found no free display number in ${MAX_ATTEMPTS} attempts`);
}

function socketPath(number: number): string {
  return `${X11_SOCKET_DIR}/X${number}`;
}

function lockPath(number: number): string {
  return `/tmp/.X${number}-lock`;
}

/**
 * The lowest number not in use: no lock file and no socket, or a stale lock whose server is gone (Xvfb itself then
 * removes the lock and re-binds the socket). A socket without a lock has an unknown owner and is left alone.
 */
function nextFreeNumber(): number {
  for (let n = FIRST_DISPLAY; n <= LAST_DISPLAY; n++) {
    if (claimed.has(n)) continue;
    const owner = readLockPid(n);
    if (owner === undefined ? !existsSync(socketPath(n)) : !processExists(owner)) return n;
  }
  throw new DesktopUnavailableError(`no free X display number between :${FIRST_DISPLAY} and :${LAST_DISPLAY}`);
}

/** Starts Xvfb on `number`; undefined when another server took that number first. */
async function tryDisplay(number: number, options: DisplayOptions): Promise<XDisplay | undefined> {
  const { width, height, log } = options;
  const args = ['--pdeathsig', 'TERM', '--', 'Xvfb', `:${number}`, '-screen', '0', `${width}x${height}x24`];
  // -noreset: by default Xvfb resets itself whenever its last client disconnects, and a client connecting during
  // that reset is refused; the readiness probe below is such a last client, the window manager the next one.
  args.push('-nolisten', 'tcp', '-nolisten', 'local', '-noreset');
  const server = spawn('setpriv', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const stderrTail = tailLines(server.stderr, `[Xvfb :${number}]`, log);
  let spawnError: Error | undefined;
  server.once('error', (err) => (spawnError = err));
  const display = new XDisplay(number, width, height, server);
  try {
    await pollUntil(() => answers(display, () => spawnError), {
      timeoutMs: options.startTimeoutMs ?? 10_000,
      what: `the display ${display.name} to answer`,
    });
  } catch (err) {
    await stopChild(server, 500);
    await drained(server);
    const said = stderrTail().join(' | ');
    if (/already active/i.test(said)) return undefined;
    const why = spawnError ? `could not run Xvfb (is it installed?): ${spawnError.message}` : String(err);
    throw new DesktopUnavailableError(`Xvfb did not start: ${why}${said ? ` (Xvfb said: ${said})` : ''}`, {
      cause: spawnError ?? err,
    });
  }
  log?.(`[display] Xvfb ${display.name} ${width}x${height} pid ${server.pid}`);
  return display;
}

/**
 * The display is ours and ready: Xvfb runs, its lock file names its pid (so whatever answers on :n is this server),
 * and it answers with the expected size. Undefined while not yet.
 */
async function answers(display: XDisplay, spawnError: () => Error | undefined): Promise<true | undefined> {
  const failed = spawnError();
  if (failed) throw failed;
  if (!display.alive()) throw new Error('Xvfb exited');
  if (!existsSync(display.socketPath)) return undefined;
  // Another pid in the lock: a stale lock our server is about to replace, or a live one that makes it exit.
  if (readLockPid(display.number) !== display.pid) return undefined;
  const out = await runHelper('xdotool', ['getdisplaygeometry'], { display: display.name, timeoutMs: 2000 }).catch(
    () => undefined, // not accepting connections yet
  );
  if (!out) return undefined;
  const [w, h] = out.toString('utf8').trim().split(/\s+/).map(Number);
  if (w !== display.width || h !== display.height) {
    throw new Error(`the display is ${w}x${h}, expected ${display.width}x${display.height}`);
  }
  return true;
}

function readLockPid(number: number): number | undefined {
  try {
    return Number(readFileSync(lockPath(number), 'utf8').trim());
  } catch {
    return undefined;
  }
}

function processExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true; // unreadable lock: leave it alone
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
