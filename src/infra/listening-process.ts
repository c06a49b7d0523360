// A server process started for tests and benches (rclone's S3 server, Jaeger): spawned, its stderr's tail kept for
// the error, and handed back once it accepts connections on each of its ports; a process that exits first, or does not
// listen in time, is stopped and reported with that tail.
import { spawn } from 'node:child_process';
import type { SpawnOptions } from 'node:child_process';
import { canConnect } from './devserver';

export interface ListeningProcess {
  /** SIGTERM, then waits for the exit (nothing when it has exited already). */
  stop(): Promise<void>;
}

export interface ListenOptions {
  /** Ports on 127.0.0.1 that must all accept connections. */
  ports: readonly number[];
  timeoutMs: number;
  /** How often the ports are tried. */
  pollMs: number;
  /** How much of stderr's end is kept for the error. */
  tailChars: number;
  cwd?: SpawnOptions['cwd'];
  /** The error for a process that did not come up, from its stderr's tail ('' when it wrote none). */
  failure: (stderr: string) => Error;
}

export async function startListening(
  command: string,
  args: readonly string[],
  opts: ListenOptions,
): Promise<ListeningProcess> {
  const child = spawn(command, [...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-opts.tailChars)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  const listening = async () => {
    for (const port of opts.ports) if (!(await canConnect('127.0.0.1', port))) return false;
    return true;
  };
  const deadline = Date.now() + opts.timeoutMs;
  while (!(await listening())) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw opts.failure(stderr.trim());
    }
    await new Promise((resolve) => setTimeout(resolve, opts.pollMs));
  }
  return { stop };
}
