// Small helpers for the long-lived children of a session (Xvfb, bwrap, the egress relay): line logging, waiting for
// a ready line or for exit, stopping.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Readable } from 'node:stream';

/** True while the child has neither exited nor been killed by a signal. */
export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Sends a signal, ignoring a child that is already gone. */
export function signal(child: ChildProcess, sig: NodeJS.Signals): void {
  if (!isRunning(child)) return;
  try {
    child.kill(sig);
  } catch {
    // already reaped
  }
}

/** Resolves when the child has exited (at once if it already has). */
export async function exited(child: ChildProcess): Promise<void> {
  if (!isRunning(child)) return;
  await once(child, 'exit');
}

/** Resolves when the child's output pipes have closed too (all its output read), or after `maxMs`. */
export async function drained(child: ChildProcess, maxMs = 1000): Promise<void> {
  if (child.stdout?.closed !== false && child.stderr?.closed !== false) return;
  await Promise.race([once(child, 'close'), sleep(maxMs)]);
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child is gone. Never throws. */
export async function stopChild(child: ChildProcess, graceMs = 2000): Promise<void> {
  if (!isRunning(child)) return;
  const gone = exited(child);
  signal(child, 'SIGTERM');
  const done = await Promise.race([gone.then(() => true), sleep(graceMs).then(() => false)]);
  if (done) return;
  signal(child, 'SIGKILL');
  await gone;
}

/** Keeps the last `max` lines a stream printed (for error messages) and passes each line to `log`. */
export function tailLines(
  stream: Readable | null,
  prefix: string,
  log: ((line: string) => void) | undefined,
  max = 20,
): () => string[] {
  const lines: string[] = [];
  let partial = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      if (line.trim() === '') continue;
      lines.push(line);
      if (lines.length > max) lines.shift();
      log?.(`${prefix} ${line}`);
    }
  });
  return () => (partial.trim() === '' ? [...lines] : [...lines, partial]);
}

/** Resolves when the child prints `mark` on a line of its own (it is ready); rejects when it exits or times out. */
export function waitForLine(
  child: ChildProcess,
  stream: Readable | null,
  mark: string,
  timeoutMs: number,
): Promise<void> {
  if (!stream) return Promise.reject(new Error('no stdout pipe'));
  return new Promise((resolve, reject) => {
    let text = '';
    const finish = (err?: Error): void => {
      clearTimeout(timer);
      stream.off('data', onData);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve();
    };
    const onData = (chunk: Buffer | string): void => {
      text += chunk.toString();
      if (text.split('\n').includes(mark)) finish();
    };
    const onExit = (): void => finish(new Error(`${child.spawnfile} exited (${child.exitCode ?? child.signalCode})`));
    const timer = setTimeout(() => finish(new Error(`no sign of life within ${timeoutMs} ms`)), timeoutMs);
    stream.on('data', onData);
    child.once('exit', onExit);
  });
}
