// Runs a short-lived helper program on the host (xdotool, scrot, xprop) against one display, with a deadline.
import { execFile } from 'node:child_process';
import { DesktopCommandError } from './errors';

export type HelperOptions = {
  /** The X display the helper talks to, e.g. ":3". */
  display: string;
  timeoutMs?: number;
};

const DEFAULT_HELPER_TIMEOUT_MS = 10_000;
const MAX_HELPER_OUTPUT = 64 * 1024 * 1024;

/** Runs `file args` with only DISPLAY, PATH and LANG set; resolves stdout, rejects with DesktopCommandError. */
export function runHelper(file: string, args: readonly string[], options: HelperOptions): Promise<Buffer> {
  const timeout = options.timeoutMs ?? DEFAULT_HELPER_TIMEOUT_MS;
  const env = { DISPLAY: options.display, PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };
  return new Promise((resolve, reject) => {
    execFile(
      file,
      [...args],
      { env, timeout, killSignal: 'SIGKILL', encoding: 'buffer', maxBuffer: MAX_HELPER_OUTPUT },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const killed = 'killed' in err && err.killed;
        const why = killed ? `did not finish within ${timeout} ms` : stderr.toString('utf8').trim() || err.message;
        reject(
          new DesktopCommandError(`${file} ${args.join(' ')} failed on ${options.display}: ${why}`, { cause: err }),
        );
      },
    );
  });
}
