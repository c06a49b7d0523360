// Starts the Temporal CLI dev server (SQLite file, Web UI) as a child process and waits until it answers.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { temporalCliPath } from './paths';

export const SEARCH_ATTRIBUTE_FLAGS = [
  'CuaStatus=Keyword',
  'CuaStep=Int',
  'CuaEvaluation=Keyword',
  'CuaCost=Double',
  'CuaSchedule=Keyword',
];

export interface DevServerOptions {
  dbFile: string;
  ip?: string;
  port?: number;
  uiPort?: number;
  headless?: boolean;
  /** The Web UI decodes payloads through this codec server (`--ui-codec-endpoint`, see `cua codec-server`). */
  uiCodecEndpoint?: string;
  /** Where the server's output goes: 'inherit' (foreground), or a log file path. */
  output?: 'inherit' | string;
  /** Dynamic config values (`--dynamic-config-value key=json`), e.g. when to suggest continue-as-new. */
  dynamicConfig?: Record<string, number | string | boolean>;
  /** Told when a start is tried again because the SQLite file was busy. */
  onRetry?: (line: string) => void;
  /**
   * Flush every commit to the disk (SQLite `synchronous=full`): what a machine crash or power loss could otherwise
   * take back (see sqlitePragmas). Off by default.
   */
  syncEveryCommit?: boolean;
}

/**
 * How the server's SQLite file commits. The server's own default (a rollback journal, each commit flushed to the disk
 * several times) made every history event wait for the disk: on a 2-core machine a step's two round trips through the
 * server cost 47 ms, 28 ms with a write-ahead log (docs/benchmarks.md). With `synchronous=normal` a commit is durable
 * once the server's write returns: the server's process may be killed at any point and loses nothing; only a machine
 * crash or power loss may take back the last commits (the file stays consistent). `syncEveryCommit` flushes each one.
 * The log lives beside the file (`FILE-wal`, `FILE-shm`): move or delete the three together.
 */
export function sqlitePragmas(syncEveryCommit = false): string[] {
  return ['journal_mode=wal', `synchronous=${syncEveryCommit ? 'full' : 'normal'}`];
}

/**
 * Dynamic config every dev server we start has (a caller's `dynamicConfig` adds to it or overrides it). The history
 * service puts a timer no sooner than this after its creation (the server's default is 1 s): a workflow task's
 * schedule-to-start of 500 ms on a lost worker's sticky queue, or a heartbeat timeout re-armed after a late
 * heartbeat, fired up to a second late. At 100 ms, the time from a killed worker to the next step on another one fell
 * by about half a second (docs/benchmarks.md, "Recovery after a lost worker").
 */
export const SERVER_DYNAMIC_CONFIG: Readonly<Record<string, string>> = {
  'history.timerProcessorMaxTimeShift': '100ms',
};

export interface DevServer {
  address: string;
  uiUrl: string | null;
  process: ChildProcess;
  stop(): Promise<void>;
}

export class DevServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export function canConnect(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Where free ports are looked for: below Linux's default ephemeral range (32768–60999). The kernel hands out that
 * range to every outgoing connection and to each port a program asks for as "any" — as the dev server does for its
 * own internal services, in every test file at once. A port picked there could be taken by another dev server's
 * internal service a moment later (seen: that server then panicked after it had started).
 */
export const FREE_PORT_RANGE = { from: 20_000, to: 32_767 } as const;

/** Whether `port` can be listened on at 127.0.0.1 now (closed again at once). */
export function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A port free at 127.0.0.1 now, picked at random in FREE_PORT_RANGE (any free port after 50 taken tries). */
export async function freePort(): Promise<number> {
  const { from, to } = FREE_PORT_RANGE;
  for (let i = 0; i < 50; i++) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (await canListen(port)) return port;
  }
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** The server's own words when another connection held its SQLite file as it started (it gives up at once). */
const SQLITE_BUSY = /SQLITE_BUSY|database is locked/;
/** Pauses before the next start when the SQLite file was busy: about 4 s in all. */
const BUSY_RETRY_DELAYS_MS = [250, 500, 1000, 2000];

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const ip = opts.ip ?? '127.0.0.1';
  const port = opts.port ?? 7233;
  if (await canConnect(ip, port)) {
    throw new DevServerError(`port ${ip}:${port} is already in use (is a Temporal server already running?)`);
  }
  fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
  // The server does not wait for a busy SQLite file: it exits at once with SQLITE_BUSY when another connection holds
  // it (seen on a loaded machine when a run starts on the data of one that just stopped). That start is tried again
  // after a pause; any other early exit is final.
  for (let attempt = 0; ; attempt++) {
    const started = await startOnce(opts, ip, port);
    if ('server' in started) return started.server;
    const delay = BUSY_RETRY_DELAYS_MS[attempt];
    if (!SQLITE_BUSY.test(started.output) || delay === undefined) {
      const tries = attempt > 0 ? ` (tried ${attempt + 1} times)` : '';
      throw new DevServerError(`${started.failure}${tries}`);
    }
    opts.onRetry?.(`the SQLite file ${opts.dbFile} is busy; starting the Temporal dev server again in ${delay} ms`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

async function startOnce(
  opts: DevServerOptions,
  ip: string,
  port: number,
): Promise<{ server: DevServer } | { failure: string; output: string }> {
  const uiPort = opts.uiPort ?? port + 1000;
  const args = ['server', 'start-dev', '--db-filename', opts.dbFile, '--ip', ip, '--port', String(port)];
  args.push(...(opts.headless ? ['--headless'] : ['--ui-port', String(uiPort)]));
  if (opts.uiCodecEndpoint && !opts.headless) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
  for (const sa of SEARCH_ATTRIBUTE_FLAGS) args.push('--search-attribute', sa);
  for (const pragma of sqlitePragmas(opts.syncEveryCommit)) args.push('--sqlite-pragma', pragma);
  for (const [key, value] of Object.entries({ ...SERVER_DYNAMIC_CONFIG, ...opts.dynamicConfig })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  args.push('--log-level', 'warn');
  let stdio: 'inherit' | ['ignore', number, number] = 'inherit';
  const logFile = opts.output && opts.output !== 'inherit' ? opts.output : null;
  // Where this attempt's output begins in the (appended) log, so its last words are its own.
  let logStart = 0;
  if (logFile) {
    const fd = fs.openSync(logFile, 'a');
    logStart = fs.fstatSync(fd).size;
    stdio = ['ignore', fd, fd];
  }
  const child = spawn(temporalCliPath(), args, { stdio });
  let exited = false;
  // If this process ends without stopping the server (an uncaught error, a closed output pipe), the server
  // goes with it rather than holding the port and the SQLite file.
  const stopOnExit = () => {
    if (!exited) child.kill('SIGTERM');
  };
  process.once('exit', stopOnExit);
  child.once('exit', () => {
    exited = true;
    process.off('exit', stopOnExit);
  });
  const deadline = Date.now() + 60_000;
  while (!(await canConnect(ip, port))) {
    if (exited) {
      // Its own words say why (a port taken, a locked or corrupt SQLite file): include them when it logged to a file.
      const output = logFile ? attemptOutput(logFile, logStart) : '';
      const why = startFailureReason(output);
      return {
        failure: `the Temporal dev server exited during start (code ${child.exitCode})${why ? `: ${why}` : ''}`,
        output,
      };
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new DevServerError('the Temporal dev server did not start within 60 s');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const server: DevServer = {
    address: `${ip}:${port}`,
    uiUrl: opts.headless ? null : `http://${ip}:${uiPort}`,
    process: child,
    stop: async () => {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    },
  };
  return { server };
}

/** What a log file gained from `from` on (one start's output). */
function attemptOutput(file: string, from: number): string {
  if (!fs.existsSync(file)) return '';
  return fs.readFileSync(file).subarray(from).toString('utf8');
}

/**
 * Why a start failed, in one line: the server's own `Error: …` line (it may be followed by the warnings of its
 * services stopping); else its first logged error (`level=ERROR msg="…" error="…"`, as when a port was taken and
 * a Go panic's stack follows it); else its last three lines.
 */
export function startFailureReason(output: string): string {
  const lines = output.trim().split('\n');
  const error = lines.filter((l) => l.startsWith('Error:')).at(-1);
  if (error !== undefined) return error;
  const logged = lines.find((l) => / level=ERROR /.test(l));
  if (logged !== undefined) {
    const field = (name: string) => new RegExp(`${name}="((?:[^"\\\\]|\\\\.)*)"`).exec(logged)?.[1];
    const [msg, err] = [field('msg'), field('error')];
    if (msg !== undefined) return err === undefined ? msg : `${msg}: ${err}`;
  }
  return lines.slice(-3).join(' | ');
}

/**
 * The dev server accepts connections a moment before its namespace is ready, and describes the namespace (read from
 * its store) a moment before the calls that go through its namespace cache find it (a start then fails with
 * "Namespace not found"): both are waited for. The second is probed with a workflow that does not exist, whose
 * answer is "workflow not found" once the namespace is known.
 */
export async function waitForNamespace(client: Client, namespace = 'default', timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await client.workflowService.describeNamespace({ namespace });
      if (await namespaceCached(client, namespace)) return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    if (Date.now() > deadline) throw new Error(`namespace ${namespace} is not ready after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Whether a call through the namespace cache finds the namespace (any answer but one about the namespace). */
async function namespaceCached(client: Client, namespace: string): Promise<boolean> {
  try {
    await client.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId: '__cua_probe__' } });
    return true;
  } catch (err) {
    // "Namespace default is not found." (never the workflow's "workflow not found for ID: …")
    return !/namespace/i.test(String((err as Error).message));
  }
}
