// Shell commands inside a session's sandbox: `runCommand` waits (with a timeout, bounded output), `runBackground`
// starts a detached process whose output goes to a numbered log file in the home.
import type { ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';
import { CommandTimeoutLimitError, SandboxError } from './errors';
import { HeadTailBuffer } from './output';
import { SANDBOX_HOME } from './sandbox';
import type { Sandbox } from './sandbox';

export type CommandLimits = {
  /** Default timeout of a command (5 s). */
  timeoutMs: number;
  /** Largest timeout a caller may ask for (120 s). */
  maxTimeoutMs: number;
  /** Characters kept from the start and from the end of a long output (2000 each). */
  headChars: number;
  tailChars: number;
};

export const DEFAULT_COMMAND_LIMITS: CommandLimits = {
  timeoutMs: 5000,
  maxTimeoutMs: 120_000,
  headChars: 2000,
  tailChars: 2000,
};

export type CommandResult = {
  /** The shell's exit status; null when it was killed (timeout). */
  exitCode: number | null;
  timedOut: boolean;
  /** stdout and stderr merged in arrival order, the middle cut out when long. */
  output: string;
  truncated: boolean;
  durationMs: number;
};

export type BackgroundProcess = {
  /** The log's path inside the sandbox, e.g. /home/user/.background/3.log. */
  logFile: string;
  /** The process id inside the sandbox. */
  pid?: number;
};

/** After the shell exits, how long to wait for its output pipe to close (a `cmd &` it left may hold it open). */
const DRAIN_AFTER_EXIT_MS = 300;
export const BACKGROUND_DIR = `${SANDBOX_HOME}/.background`;

// The outer shell sends stderr into stdout, then runs the command in a fresh shell, so even the command's syntax
// errors arrive in the merged stream.
const MERGED = 'exec 2>&1; exec /bin/sh -c "$1"';

// Claims the next free <n>.log atomically (noclobber), then starts the command in its own session, detached from
// this shell, with its output in that log. Prints "<n> <pid>".
const BACKGROUND = `d=${BACKGROUND_DIR}
mkdir -p "$d" && [ -w "$d" ] || { echo "cannot write to $d" >&2; exit 1; }
n=1
while ! (set -C; : > "$d/$n.log") 2>/dev/null; do
  n=$((n + 1)); [ "$n" -gt 100000 ] && { echo "no free log name in $d" >&2; exit 1; }
done
setsid nohup /bin/sh -c "$1" >> "$d/$n.log" 2>&1 < /dev/null &
echo "$n $!"`;

export class CommandRunner {
  private readonly running = new Set<ChildProcess>();

  constructor(
    private readonly sandbox: Sandbox,
    readonly limits: CommandLimits = DEFAULT_COMMAND_LIMITS,
  ) {}

  /** Runs `command` with /bin/sh -c in /home/user; on timeout kills its whole process group. */
  async runCommand(command: string, options: { timeoutMs?: number } = {}): Promise<CommandResult> {
    return this.execute(MERGED, command, this.checkTimeout(options.timeoutMs));
  }

  /** Starts `command` detached; returns at once with the log file it writes to (inside the sandbox). */
  async runBackground(command: string): Promise<BackgroundProcess> {
    const result = await this.execute(`exec 2>&1\n${BACKGROUND}`, command, 10_000);
    const match = /^(\d+) (\d+)$/m.exec(result.output);
    if (result.exitCode !== 0 || !match) {
      throw new SandboxError(`could not start a background command: ${result.output.trim() || 'no output'}`);
    }
    return { logFile: `${BACKGROUND_DIR}/${match[1]}.log`, pid: Number(match[2]) };
  }

  /** Synchronous last resort for exit hooks: kills every command still running. */
  killAll(): void {
    for (const child of this.running) killGroup(child);
  }

  /** Runs `/bin/sh -c script sh argument` inside the sandbox in its own process group. */
  private execute(script: string, argument: string, timeoutMs: number): Promise<CommandResult> {
    const started = Date.now();
    const child = this.sandbox.spawnInside(['/bin/sh', '-c', script, 'sh', argument], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.running.add(child);
    const output = new HeadTailBuffer(this.limits.headChars, this.limits.tailChars);
    const decoder = new StringDecoder('utf8');
    const onData = (chunk: Buffer): void => output.append(decoder.write(chunk));
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);

    return new Promise((resolve, reject) => {
      let timedOut = false;
      let drainTimer: NodeJS.Timeout | undefined;
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child);
        void groupGone(child.pid).then(() => finish());
      }, timeoutMs);
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearTimeout(drainTimer);
        this.running.delete(child);
        child.stdout?.destroy();
        child.stderr?.destroy();
        output.append(decoder.end());
        resolve({
          exitCode: timedOut ? null : child.exitCode,
          timedOut,
          output: output.toString(),
          truncated: output.truncated,
          durationMs: Date.now() - started,
        });
      };
      child.once('error', (err) => {
        clearTimeout(timer);
        this.running.delete(child);
        reject(new SandboxError(`could not run a command in the sandbox: ${err.message}`, { cause: err }));
      });
      // After a timeout, finish waits for the whole group to be gone instead (see the timer).
      child.once('close', () => {
        if (!timedOut) finish();
      });
      child.once('exit', () => {
        if (!timedOut) drainTimer = setTimeout(finish, DRAIN_AFTER_EXIT_MS);
      });
    });
  }

  private checkTimeout(timeoutMs: number | undefined): number {
    const value = timeoutMs ?? this.limits.timeoutMs;
    if (!Number.isFinite(value) || value <= 0) {
      throw new CommandTimeoutLimitError(`timeoutMs must be a positive number of milliseconds, got ${value}`);
    }
    if (value > this.limits.maxTimeoutMs) {
      throw new CommandTimeoutLimitError(
        `timeoutMs ${value} is above the maximum of ${this.limits.maxTimeoutMs} ms; use runBackground for long jobs`,
      );
    }
    return value;
  }
}

/** Resolves once no process of the group is left (SIGKILL is delivered asynchronously), or after `maxMs`. */
async function groupGone(pgid: number | undefined, maxMs = 2000): Promise<void> {
  if (pgid === undefined) return;
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return;
    }
    await sleep(20);
  }
}

/** SIGKILL to the command's host-side process group: nsenter and everything the command started in its group. */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is already gone
  }
}
