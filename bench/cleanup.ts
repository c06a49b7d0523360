// Everything the benchmark starts is registered here and stopped at the end, also after an error or Ctrl-C:
// async stoppers run last-in first-out; then tracked child processes (and their own children, e.g. a worker
// child's Chromium) are killed by pid; at process exit, anything still below our process is killed too.
import type { ChildProcess } from 'node:child_process';
import { descendants } from './procs';

type Stopper = { name: string; stop: () => Promise<void> };

const stoppers: Stopper[] = [];
const children = new Set<ChildProcess>();
const atExit: (() => void)[] = [];
let cleaning: Promise<void> | undefined;

/** Registers a stopper; the returned function runs it now (once) and unregisters it. */
export function onCleanup(name: string, stop: () => Promise<void>): () => Promise<void> {
  const entry: Stopper = { name, stop };
  stoppers.push(entry);
  return async () => {
    const i = stoppers.indexOf(entry);
    if (i < 0) return;
    stoppers.splice(i, 1);
    await stop();
  };
}

/** A child process to kill (with its descendants) at the latest when the benchmark ends. */
export function trackChild(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Synchronous work for process exit (e.g. removing the temp dir), run after leftovers are killed. */
export function onExitSync(fn: () => void): void {
  atExit.push(fn);
}

function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** SIGKILL by pid; the list is made before any is killed, so no grandchild is missed by being reparented. */
function killAll(pids: Iterable<number>): void {
  for (const pid of [...pids]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

function trackedPids(): Set<number> {
  const pids = new Set<number>();
  for (const child of children) {
    if (!child.pid) continue;
    pids.add(child.pid);
    for (const pid of descendants(child.pid)) pids.add(pid);
  }
  return pids;
}

/** Runs every registered stopper (newest first, each given at most 20 s), then kills tracked children. */
export function cleanupAll(log: (line: string) => void = () => undefined): Promise<void> {
  cleaning ??= (async () => {
    while (stoppers.length > 0) {
      const { name, stop } = stoppers.pop() as Stopper;
      await withTimeout(
        stop().catch((err: unknown) => log(`cleanup of ${name} failed: ${String(err)}`)),
        20_000,
      );
    }
    killAll(trackedPids());
  })();
  return cleaning;
}

function onExit(): void {
  const pids = trackedPids();
  for (const pid of descendants(process.pid)) pids.add(pid);
  killAll(pids);
  for (const fn of atExit) {
    try {
      fn();
    } catch {
      // best effort at exit
    }
  }
}

/** Ctrl-C / SIGTERM: clean up, then exit 130; and kill leftovers on any exit. */
export function installExitHandlers(log: (line: string) => void): void {
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: cleaning up`);
    void cleanupAll(log).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', onExit);
}
