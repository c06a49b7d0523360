// The desktop sandbox's walls and the pool's bookkeeping, on real Xvfb and bubblewrap: commands see only the
// system (read-only), their home and a private /tmp; no network unless asked for; the pool's limit and ids; and
// closing a session leaves no process of it behind.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DesktopClosedError,
  DesktopPool,
  DesktopPoolFullError,
  DesktopSession,
  SandboxError,
  UnknownDesktopSessionError,
  desktopSupport,
} from '../../src/desktop';
import {
  childrenNamed,
  openSession,
  pidNamespace,
  processAlive,
  processesIn,
  startTcpServer,
  waitFor,
} from '../fixtures/desktop/helpers';
import type { TcpProbeServer } from '../fixtures/desktop/helpers';

const PROJECT_PACKAGE_JSON = path.resolve(__dirname, '../../package.json');
const OPEN_AND_WAIT = path.resolve(__dirname, '../fixtures/desktop/open-and-wait.ts');
const support = desktopSupport();

describe.skipIf(!support.ok)('desktop sandbox', () => {
  let scratch: string;
  let secretFile: string;
  let session: DesktopSession;
  let server: TcpProbeServer;

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'cua-desk-sandbox-'));
    secretFile = path.join(scratch, 'secret.txt');
    await writeFile(secretFile, 'top secret\n');
    server = await startTcpServer();
    session = await openSession({ homeDir: path.join(scratch, 'home'), apps: [] });
  });

  afterAll(async () => {
    await session?.close();
    await server?.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it('creates a missing home (0700) and runs as an unprivileged user with exactly its environment', async () => {
    expect((await stat(path.join(scratch, 'home'))).mode & 0o777).toBe(0o700);

    const who = await session.runCommand('id -u; id -un; grep -E "^(CapEff|NoNewPrivs):" /proc/self/status');
    expect(who.output).toMatch(/^1000\nuser\nCapEff:\s+0+\nNoNewPrivs:\s+1\n$/);
    const env = await session.runCommand('env | sort');
    expect(env.output.split('\n').filter((l) => l !== '' && !l.startsWith('PWD='))).toEqual([
      `DISPLAY=${session.display}`,
      'HOME=/home/user',
      'LANG=C.UTF-8',
      'LOGNAME=user',
      'PATH=/usr/local/bin:/usr/bin:/bin',
      'TERM=xterm',
      'USER=user',
      'XDG_RUNTIME_DIR=/tmp/runtime-user',
    ]);
  });

  it('cannot read host files outside its home', async () => {
    expect(await readFile(PROJECT_PACKAGE_JSON, 'utf8')).toContain('"name"');
    for (const file of [secretFile, PROJECT_PACKAGE_JSON, '/root/.bashrc']) {
      const result = await session.runCommand(`cat ${file}`);
      expect(result.exitCode, file).not.toBe(0);
      expect(result.output).toMatch(/No such file or directory/);
    }
    const listing = await session.runCommand('ls /');
    expect(listing.output.split('\n').filter(Boolean).sort()).toEqual(
      ['bin', 'dev', 'etc', 'home', 'lib', 'lib64', 'proc', 'sbin', 'tmp', 'usr', 'var'].filter(
        (d) => d !== 'lib64' || existsSync('/lib64'),
      ),
    );
  });

  it('cannot write outside its home and its private /tmp', async () => {
    const targets = [
      '/usr/cua-probe',
      '/etc/cua-probe',
      '/cua-probe',
      '/home/cua-probe',
      '/var/cua-probe',
      '/dev/cua-probe',
    ];
    for (const target of targets) {
      const result = await session.runCommand(`echo x > ${target}`);
      expect(result.exitCode, target).not.toBe(0);
    }
    const probe = `cua-desk-probe-${process.pid}`;
    const inside = await session.runCommand(
      `echo x > /tmp/${probe} && echo y > ~/${probe} && echo z > /dev/null && echo ok`,
    );
    expect(inside.output).toBe('ok\n');
    expect(existsSync(path.join(os.tmpdir(), probe))).toBe(false);
    expect(await readFile(path.join(scratch, 'home', probe), 'utf8')).toBe('y\n');
  });

  it('cannot reach a TCP server on the host by default', async () => {
    const viaBash = await session.runCommand(`bash -c 'echo hi > /dev/tcp/127.0.0.1/${server.port}'`);
    expect(viaBash.exitCode).not.toBe(0);
    expect(viaBash.output).toMatch(/Connection refused/);
    const viaPython = await session.runCommand(
      `python3 -c 'import socket; socket.create_connection(("127.0.0.1", ${server.port}), timeout=2)'`,
    );
    expect(viaPython.exitCode).not.toBe(0);
    expect(server.connections).toBe(0);
  });

  it('reaches the host network when opened with network: true', async () => {
    const networked = await openSession({ homeDir: path.join(scratch, 'net-home'), apps: [], network: true });
    try {
      const result = await networked.runCommand(`bash -c 'echo hi > /dev/tcp/127.0.0.1/${server.port}'`);
      expect(result.exitCode).toBe(0);
      expect(await waitFor(() => server.received.find((t) => t === 'hi\n'), 'the greeting at the server')).toBe('hi\n');
    } finally {
      await networked.close();
    }
  });

  it('refuses a relative home and leaves no display running', async () => {
    const before = childrenNamed('Xvfb');
    await expect(DesktopSession.open({ homeDir: 'relative/home', apps: [] })).rejects.toBeInstanceOf(SandboxError);
    expect(childrenNamed('Xvfb')).toEqual(before);
  });
});

describe.skipIf(!support.ok)('DesktopPool', () => {
  let scratch: string;

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'cua-desk-pool-'));
  });

  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('hands out desk- ids, refuses sessions beyond its limit, and forgets closed ones', async () => {
    const pool = new DesktopPool({ maxSessions: 1, defaults: { apps: [] } });
    try {
      const { sessionId, session } = await pool.open({ homeDir: path.join(scratch, 'a') });
      expect(sessionId).toMatch(/^desk-[0-9a-f]+$/);
      expect(pool.get(sessionId)).toBe(session);
      expect([pool.size, pool.has(sessionId)]).toEqual([1, true]);
      await expect(pool.open({ homeDir: path.join(scratch, 'b') })).rejects.toBeInstanceOf(DesktopPoolFullError);

      await pool.close(sessionId);
      expect([pool.size, pool.has(sessionId), session.alive()]).toEqual([0, false, false]);
      expect(() => pool.get(sessionId)).toThrow(UnknownDesktopSessionError);
      const next = await pool.open({ homeDir: path.join(scratch, 'b') });
      expect(pool.sessionIds()).toEqual([next.sessionId]);
    } finally {
      await pool.closeAll();
    }
    expect(pool.size).toBe(0);
  });

  it('close kills the display, the sandbox and every process inside it', async () => {
    const pool = new DesktopPool({ maxSessions: 2 });
    const { sessionId, session } = await pool.open({ homeDir: path.join(scratch, 'c') });
    await session.runBackground('sleep 1000');
    const pids = session.processes();
    const namespace = pidNamespace(pids.sandboxInit) ?? 'none';
    const socket = `/tmp/.X11-unix/X${session.display.slice(1)}`;
    await waitFor(() => (processesIn(namespace).length >= 4 ? true : undefined), 'openbox, xterm and sleep');
    expect(existsSync(socket)).toBe(true);

    await pool.closeAll();
    expect(pool.has(sessionId)).toBe(false);
    expect([processAlive(pids.display), processAlive(pids.sandbox), processAlive(pids.sandboxInit)]).toEqual([
      false,
      false,
      false,
    ]);
    expect(processesIn(namespace)).toEqual([]);
    expect(existsSync(socket)).toBe(false);
    await expect(session.screenshot()).rejects.toBeInstanceOf(DesktopClosedError);
    await expect(session.runCommand('true')).rejects.toBeInstanceOf(DesktopClosedError);
    await session.close(); // idempotent
  });

  it.each([
    ['killed with SIGKILL (no exit hook runs)', 'wait'],
    ['exiting with process.exit (the exit hook runs)', 'exit'],
  ])('leaves no process behind when the worker is %s', async (_how, mode) => {
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', OPEN_AND_WAIT, path.join(scratch, mode), mode], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    try {
      const line = await waitFor(() => /^\{.*\}$/m.exec(stdout)?.[0], 'the session pids from the child', 30_000).catch(
        (err: Error) => Promise.reject(new Error(`${err.message}; the child said:\n${stderr}`)),
      );
      const pids = JSON.parse(line) as { display: number; sandbox: number; sandboxInit: number };
      const hostPids = [pids.display, pids.sandbox, pids.sandboxInit];
      const namespace = pidNamespace(pids.sandboxInit) ?? 'gone';
      if (mode === 'wait') {
        expect(hostPids.every(processAlive)).toBe(true);
        child.kill('SIGKILL');
      }
      await waitFor(
        () => (hostPids.every((pid) => !processAlive(pid)) && processesIn(namespace).length === 0 ? true : undefined),
        'every process of the session to end',
        5000,
      );
    } finally {
      child.kill('SIGKILL');
    }
  });
});
