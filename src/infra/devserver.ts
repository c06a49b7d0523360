// Starts the Temporal CLI dev server (SQLite file, Web UI) as a child process and waits until it answers.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { temporalCliPath } from './paths';

export const SEARCH_ATTRIBUTE_FLAGS = ['CuaStatus=Keyword', 'CuaStep=Int', 'CuaEvaluation=Keyword'];

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
}

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

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const ip = opts.ip ?? '127.0.0.1';
  const port = opts.port ?? 7233;
  const uiPort = opts.uiPort ?? port + 1000;
  if (await canConnect(ip, port)) {
    throw new DevServerError(`port ${ip}:${port} is already in use (is a Temporal server already running?)`);
  }
  fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
  const args = ['server', 'start-dev', '--db-filename', opts.dbFile, '--ip', ip, '--port', String(port)];
  args.push(...(opts.headless ? ['--headless'] : ['--ui-port', String(uiPort)]));
  if (opts.uiCodecEndpoint && !opts.headless) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
  for (const sa of SEARCH_ATTRIBUTE_FLAGS) args.push('--search-attribute', sa);
  for (const [key, value] of Object.entries(opts.dynamicConfig ?? {})) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  args.push('--log-level', 'warn');
  let stdio: 'inherit' | ['ignore', number, number] = 'inherit';
  if (opts.output && opts.output !== 'inherit') {
    const fd = fs.openSync(opts.output, 'a');
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
      // Its own last words say why (a port taken, a locked or corrupt SQLite file): include them when it logged to a file.
      const tail =
        opts.output && opts.output !== 'inherit' && fs.existsSync(opts.output)
          ? fs.readFileSync(opts.output, 'utf8').trim().split('\n').slice(-3).join(' | ')
          : '';
      throw new DevServerError(
        `the Temporal dev server exited during start (code ${child.exitCode})${tail ? `: ${tail}` : ''}`,
      );
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new DevServerError('the Temporal dev server did not start within 60 s');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
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
}

/** The dev server accepts connections a moment before its namespace is ready. */
export async function waitForNamespace(client: Client, namespace = 'default', timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await client.workflowService.describeNamespace({ namespace });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
