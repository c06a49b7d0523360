// Sharing a desktop session's screen with a person (a takeover): x11vnc on the session's X display, listening on
// 127.0.0.1 only with a password of its own, and websockify serving noVNC's page and bridging its WebSocket to that
// port. The person opens noVNC's vnc.html; the password is the lease's token. Debian's x11vnc, websockify and novnc.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { NOVNC_DIR, VNC_APT_LINE } from '../infra/desktop-programs';
import { isRunning, stopChild, tailLines } from './child';
import { DesktopUnavailableError } from './errors';
import { pollUntil } from './wait';

/** How long x11vnc and websockify get to answer. */
const START_TIMEOUT_MS = 15_000;
/** The RFB protocol's greeting, what a VNC server says first. */
const RFB_GREETING = /^RFB \d{3}\.\d{3}\n$/;

export type VncShareOptions = {
  /** The session's X display, ":<n>". */
  display: string;
  /** Where websockify (noVNC's page and socket) listens; default 127.0.0.1. */
  host?: string;
  log?: (line: string) => void;
};

/** A free TCP port on `host` (the port may be taken again before it is used: the start then fails and says so). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** The first 12 bytes a server on `port` says (a VNC server: its RFB greeting); undefined if it does not answer. */
export function greeting(port: number, host = '127.0.0.1'): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    let text = '';
    const done = (value: string | undefined) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(2_000, () => done(undefined));
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (text.length >= 12) done(text.slice(0, 12));
    });
    socket.on('error', () => done(undefined));
    socket.on('close', () => done(text.length >= 12 ? text.slice(0, 12) : undefined));
  });
}

/** Starts a child with its output kept for an error message; it fails the share if it exits early. */
function startChild(command: string, args: string[], log: ((line: string) => void) | undefined) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = tailLines(child.stdout, `${command}:`, log);
  const err = tailLines(child.stderr, `${command}:`, log);
  child.on('error', () => undefined); // a missing program: reported by the wait below
  return { child, lines: () => [...out(), ...err()].slice(-5).join(' | ') };
}

export class VncShare {
  private constructor(
    /** The VNC password (8 characters: the RFB VNC authentication uses no more). */
    readonly password: string,
    /** x11vnc's port on 127.0.0.1. */
    readonly vncPort: number,
    /** websockify's port on `host`: noVNC's page at /vnc.html, its socket at /websockify. */
    readonly webPort: number,
    private readonly children: ChildProcess[],
    private readonly dir: string,
  ) {}

  /** Shares the display; DesktopUnavailableError when a program is missing or does not answer in time. */
  static async start(options: VncShareOptions): Promise<VncShare> {
    const host = options.host ?? '127.0.0.1';
    const password = randomBytes(6).toString('base64url'); // 8 characters
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cua-vnc-'));
    const children: ChildProcess[] = [];
    try {
      // The password goes through a file x11vnc removes once read (`rm:`), never on a command line (ps shows those).
      await writeFile(path.join(dir, 'passwd'), `${password}\n`, { mode: 0o600 });
      const vncPort = await freePort('127.0.0.1');
      const x11vnc = startChild(
        'x11vnc',
        [
          ...['-display', options.display, '-rfbport', String(vncPort), '-localhost', '-forever', '-shared'],
          ...['-passwdfile', `rm:${path.join(dir, 'passwd')}`, '-quiet', '-noxdamage'],
        ],
        options.log,
      );
      children.push(x11vnc.child);
      await waitFor(x11vnc, async () => RFB_GREETING.test((await greeting(vncPort)) ?? '') || undefined, 'x11vnc');
      const webPort = await freePort(host);
      const web = startChild(
        'websockify',
        ['--web', NOVNC_DIR, `${host}:${webPort}`, `127.0.0.1:${vncPort}`],
        options.log,
      );
      children.push(web.child);
      await waitFor(web, async () => (await pageAnswers(host, webPort)) || undefined, 'websockify');
      return new VncShare(password, vncPort, webPort, children, dir);
    } catch (error) {
      await Promise.all(children.map((c) => stopChild(c)));
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.children.map((c) => stopChild(c)));
    await rm(this.dir, { recursive: true, force: true });
  }
}

async function pageAnswers(host: string, port: number): Promise<boolean> {
  const response = await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${port}/vnc.html`, {
    signal: AbortSignal.timeout(2_000),
  }).catch(() => undefined);
  return response?.status === 200;
}

/** Waits for a started program to answer; one that exits or stays silent fails with its last lines. */
async function waitFor(
  started: { child: ChildProcess; lines: () => string },
  probe: () => Promise<true | undefined>,
  name: string,
): Promise<void> {
  try {
    await pollUntil(
      async () => {
        if (!isRunning(started.child) || started.child.pid === undefined) {
          throw new DesktopUnavailableError(`${name} did not start (${VNC_APT_LINE}): ${started.lines()}`);
        }
        return probe();
      },
      { timeoutMs: START_TIMEOUT_MS, intervalMs: 100, what: `${name} to answer` },
    );
  } catch (error) {
    if (error instanceof DesktopUnavailableError) throw error;
    throw new DesktopUnavailableError(`${name} did not answer: ${started.lines()}`, { cause: error });
  }
}
