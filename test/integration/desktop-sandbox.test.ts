// The desktop sandbox's walls and the pool's bookkeeping, on real Xvfb and bubblewrap: commands see only the
// system (read-only), their home and a private /tmp; no network unless asked for; the pool's limit and ids; and
// closing a session leaves no process of it behind.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, lstat, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_SANDBOX_HOST_UID,
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
/** A root worker runs the sandbox as DEFAULT_SANDBOX_HOST_UID; any other worker, as itself. */
const workerIsRoot = process.getuid?.() === 0;
const sandboxUid = workerIsRoot ? DEFAULT_SANDBOX_HOST_UID : (process.getuid?.() ?? -1);

/** The Uid line of /proc/<pid>/status: real, effective, saved and file-system uid. */
function hostUids(pid: number): number[] {
  const line = /^Uid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';
  return line.trim().split(/\s+/).map(Number);
}

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
    const home = await stat(path.join(scratch, 'home'));
    expect([home.mode & 0o777, home.uid, home.gid]).toEqual([0o700, sandboxUid, workerIsRoot ? sandboxUid : home.gid]);

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

  it('is an unprivileged host user: no root-only file can be read, and what it writes belongs to that user', async () => {
    expect(session.sandboxUid).toBe(sandboxUid);
    expect(sandboxUid).not.toBe(0);
    const shadow = await session.runCommand('cat /etc/shadow');
    expect(shadow.exitCode).not.toBe(0);
    expect(shadow.output).toMatch(/Permission denied/);
    if (existsSync('/etc/ssl/private') && ((await stat('/etc/ssl/private')).mode & 0o005) === 0) {
      const keys = await session.runCommand('ls /etc/ssl/private');
      expect(keys.output).toMatch(/Permission denied/);
    }

    const made = await session.runCommand('mkdir -p made/deeper && echo mine > made/deeper/file.txt && echo ok');
    expect(made.output).toBe('ok\n');
    for (const name of ['made', 'made/deeper', 'made/deeper/file.txt']) {
      const owner = await stat(path.join(scratch, 'home', name));
      expect([name, owner.uid], name).toEqual([name, sandboxUid]);
    }

    // From the host: every process in the sandbox (its init, the window manager, a command) runs as that uid.
    await session.runBackground('sleep 1000');
    const namespace = pidNamespace(session.processes().sandboxInit) ?? 'none';
    const pids = await waitFor(() => {
      const found = processesIn(namespace);
      return found.length >= 3 ? found : undefined;
    }, 'init, openbox and sleep in the sandbox');
    for (const pid of [...pids, session.processes().sandbox ?? -1]) {
      expect([pid, hostUids(pid)]).toEqual([pid, [sandboxUid, sandboxUid, sandboxUid, sandboxUid]]);
    }
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

  it('opens a new session on a home an earlier session wrote, handing over what is there', async () => {
    const home = path.join(scratch, 'reopened');
    const first = await openSession({ homeDir: home, apps: [] });
    try {
      const wrote = await first.runCommand('mkdir -p notes && echo one > notes/log.txt && chmod 600 notes/log.txt');
      expect(wrote.exitCode).toBe(0);
    } finally {
      await first.close();
    }
    // Meanwhile the worker (root, when it is) adds a private file, and the home holds a link to a host file.
    await writeFile(path.join(home, 'from-worker.txt'), 'from the worker\n', { mode: 0o600 });
    await symlink(secretFile, path.join(home, 'link-to-secret'));
    await chmod(home, 0o755);

    const second = await openSession({ homeDir: home, apps: [] });
    try {
      const appended = await second.runCommand(
        'echo two >> notes/log.txt && cat notes/log.txt from-worker.txt && echo x > notes/new.txt && echo ok',
      );
      expect(appended.output).toBe('one\ntwo\nfrom the worker\nok\n');
      expect(await readFile(path.join(home, 'notes', 'log.txt'), 'utf8')).toBe('one\ntwo\n');
      const owners = await Promise.all(
        ['.', 'notes', 'notes/log.txt', 'notes/new.txt', 'from-worker.txt', 'link-to-secret'].map(
          async (name) => (await lstat(path.join(home, name))).uid,
        ),
      );
      if (workerIsRoot) expect(owners).toEqual(owners.map(() => sandboxUid));
      expect((await stat(home)).mode & 0o777).toBe(workerIsRoot ? 0o700 : 0o755);
      // The link was handed over, not what it points to (which the sandbox cannot see anyway).
      const secret = await stat(secretFile);
      expect(secret.uid).toBe(process.getuid?.());
      expect((await second.runCommand('cat link-to-secret')).output).toMatch(/No such file or directory/);
    } finally {
      await second.close();
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
    const pool = new DesktopPool({ slots: 1, defaults: { apps: [] } });
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

  it('holds a desktop for a reply: taken back alive, its slot free for an open, ended when the time is up or at closeAll', async () => {
    const pool = new DesktopPool({ slots: 1, idleTimeoutMs: 200, defaults: { apps: [] } });
    const ended: string[] = [];
    /** Holds a desktop; its end records why, and whether the desktop was still open to be saved. */
    const hold = (id: string, ms: number) =>
      pool.hold(id, ms, async (why) => void ended.push(`${id} ${why} ${pool.has(id) ? 'open' : 'gone'}`));
    try {
      const a = await pool.open({ homeDir: path.join(scratch, 'held-a') });
      expect(hold(a.sessionId, 60_000)).toBe(true);
      expect(pool.held).toBe(1);
      // Past the idle limit while held: the sweep leaves it alone; a reply takes it back as it was.
      await waitFor(() => (a.session.idleFor() > 400 ? true : undefined), 'the held desktop to be idle a while');
      expect(await pool.closeIdle()).toEqual([]);
      expect(await pool.reclaim(a.sessionId)).toBe(true);
      expect([pool.held, a.session.alive()]).toEqual([0, true]);
      expect(await pool.reclaim(a.sessionId)).toBe(false); // no longer held

      // Held again, in a full pool: an open ends the hold (saved while still open), then closes it for its slot.
      expect(hold(a.sessionId, 60_000)).toBe(true);
      const b = await pool.open({ homeDir: path.join(scratch, 'held-b') });
      expect(ended).toEqual([`${a.sessionId} pool_needed open`]);
      expect([pool.has(a.sessionId), a.session.alive()]).toEqual([false, false]);
      expect(await pool.reclaim(a.sessionId)).toBe(false);

      // A hold whose time is up ends on its own.
      expect(hold(b.sessionId, 50)).toBe(true);
      await waitFor(() => (pool.has(b.sessionId) ? undefined : true), 'the hold of b to run out');
      expect(ended.at(-1)).toBe(`${b.sessionId} expired open`);

      const c = await pool.open({ homeDir: path.join(scratch, 'held-c') });
      expect(hold(c.sessionId, 60_000)).toBe(true);
      await pool.closeAll();
      expect(ended.at(-1)).toBe(`${c.sessionId} shutdown open`);
      expect(c.session.alive()).toBe(false);
    } finally {
      await pool.closeAll();
    }
  });

  it('close kills the display, the sandbox and every process inside it', async () => {
    const pool = new DesktopPool({ slots: 2 });
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
