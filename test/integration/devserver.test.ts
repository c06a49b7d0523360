// Starting the dev server: a server that cannot start says why in the one-line error (its own last log lines), and a
// port that is taken is refused before anything starts; a start that finds its SQLite file busy is tried again; the
// file commits through a write-ahead log, and what was committed survives the server's process being killed.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { canConnect, DevServerError, freePort, startDevServer } from '../../src/infra/devserver';
import { loadConfig } from '../../src/runtime/config';
import { createWorkerRuntime } from '../../worker/main';

describe('startDevServer', () => {
  it('a server that exits while starting is reported with its own reason', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-devserver-'));
    const dbFile = path.join(dir, 'a-directory'); // not a file SQLite can open
    fs.mkdirSync(dbFile);
    const output = path.join(dir, 'server.log');
    const err = await startDevServer({ dbFile, port: await freePort(), headless: true, output }).catch((e) => e);
    expect(err).toBeInstanceOf(DevServerError);
    expect(String(err.message)).toMatch(/exited during start \(code \d+\): .*unable to open database file/);
    expect(String(err.message)).not.toContain('\n');
  }, 60_000);

  it('a taken port is refused before starting', async () => {
    const taken = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => taken.once('listening', r));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const dbFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cua-devserver-')), 'db.sqlite');
      await expect(startDevServer({ dbFile, port, headless: true })).rejects.toThrow(/already in use/);
    } finally {
      taken.close();
    }
  });

  // Another connection holds the file (SQLite's own exclusive lock, taken by Python's sqlite3 module) for holdS
  // seconds; resolves once the lock is held.
  async function holdLock(dbFile: string, holdS: number): Promise<{ released: Promise<void> }> {
    const script = [
      'import sqlite3, sys, time',
      'c = sqlite3.connect(sys.argv[1], isolation_level=None)',
      "c.execute('BEGIN EXCLUSIVE')",
      "print('held', flush=True)",
      'time.sleep(float(sys.argv[2]))',
      "c.execute('COMMIT')",
    ].join('\n');
    const child = spawn('python3', ['-c', script, dbFile, String(holdS)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const released = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`python3 exited (${code}) before taking the lock`)));
    });
    return { released };
  }

  it('a start that finds the SQLite file busy is tried again and comes up once the file is free', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-devserver-'));
    const dbFile = path.join(dir, 'temporal.sqlite');
    const output = path.join(dir, 'server.log');
    // The data of a run that has just stopped: a file the server made.
    const first = await startDevServer({ dbFile, port: await freePort(), headless: true, output });
    await first.stop();
    const lock = await holdLock(dbFile, 1.2);
    const retries: string[] = [];
    const server = await startDevServer({
      dbFile,
      port: await freePort(),
      headless: true,
      output,
      onRetry: (l) => retries.push(l),
    });
    try {
      await lock.released;
      expect(retries.length).toBeGreaterThanOrEqual(1);
      expect(retries[0]).toContain(`the SQLite file ${dbFile} is busy`);
      expect(fs.readFileSync(output, 'utf8')).toMatch(/SQLITE_BUSY|database is locked/);
      const [host, port] = server.address.split(':');
      expect(await canConnect(host ?? '', Number(port))).toBe(true);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('a file that stays busy fails the start with the reason and the number of tries', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-devserver-'));
    const dbFile = path.join(dir, 'temporal.sqlite');
    const lock = await holdLock(dbFile, 6);
    const retries: string[] = [];
    const err = await startDevServer({
      dbFile,
      port: await freePort(),
      headless: true,
      output: path.join(dir, 'server.log'),
      onRetry: (l) => retries.push(l),
    }).catch((e) => e);
    expect(err).toBeInstanceOf(DevServerError);
    expect(String(err.message)).toMatch(/exited during start \(code \d+\): .*database is locked.*\(tried 5 times\)$/);
    expect(retries).toHaveLength(4);
    await lock.released;
  }, 60_000);

  /** The SQLite file's journal mode, read by another connection (Python's sqlite3). */
  function journalMode(dbFile: string): string {
    const script =
      "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('pragma journal_mode').fetchone()[0])";
    return execFileSync('python3', ['-c', script, dbFile], { encoding: 'utf8' }).trim();
  }

  it('the file commits through a write-ahead log, timers are not held back; a workflow survives kill -9 of the server', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-devserver-'));
    const dbFile = path.join(dir, 'temporal.sqlite');
    const port = await freePort();
    const first = await startDevServer({ dbFile, port, headless: true, output: path.join(dir, 'server.log') });
    const args = fs.readFileSync(`/proc/${first.process.pid}/cmdline`, 'utf8').split('\0');
    expect(args.join(' ')).toContain('--sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal');
    // Timers as short as a lost worker's sticky schedule-to-start (500 ms) fire on time, not a second late.
    expect(args.join(' ')).toContain('--dynamic-config-value history.timerProcessorMaxTimeShift="100ms"');
    expect(journalMode(dbFile)).toBe('wal');
    let connection = await Connection.connect({ address: first.address });
    const workflowId = `survives-${Date.now()}`;
    // No worker polls this queue: the start is only a committed history, read back after the kill.
    await new Client({ connection }).workflow.start('nothing', { taskQueue: 'nobody', workflowId, args: [] });
    await connection.close();
    const exited = new Promise((r) => first.process.once('exit', r));
    first.process.kill('SIGKILL');
    await exited;
    expect(fs.existsSync(`${dbFile}-wal`)).toBe(true);
    const second = await startDevServer({
      dbFile,
      port,
      headless: true,
      syncEveryCommit: true,
      output: path.join(dir, 'server.log'),
    });
    connection = await Connection.connect({ address: second.address });
    try {
      const secondArgs = fs.readFileSync(`/proc/${second.process.pid}/cmdline`, 'utf8').split('\0').join(' ');
      expect(secondArgs).toContain('--sqlite-pragma synchronous=full');
      const described = await new Client({ connection }).workflow.getHandle(workflowId).describe();
      expect(described.status.name).toBe('RUNNING');
      expect(described.taskQueue).toBe('nobody');
    } finally {
      await connection.close();
      await second.stop();
    }
  }, 90_000);

  it('a worker refuses a namespace without our search attributes, naming the commands that add them', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-devserver-'));
    const server = await startDevServer({
      dbFile: path.join(dir, 'db.sqlite'),
      port: await freePort(),
      headless: true,
    });
    const connection = await Connection.connect({ address: server.address });
    try {
      // The dev server registers ours on `default` only; a namespace made later (as on a cluster set up before
      // CuaCost existed) has none of them.
      await connection.workflowService.registerNamespace({
        namespace: 'bare',
        workflowExecutionRetentionPeriod: msToTs('1 day'),
      });
      const env = {
        TEMPORAL_ADDRESS: server.address,
        TEMPORAL_NAMESPACE: 'bare',
        CUA_RUNS_DIR: path.join(dir, 'runs'),
      };
      const refused = await createWorkerRuntime(loadConfig({ env })).catch((e: unknown) => e);
      expect(String(refused)).toMatch(
        /namespace 'bare' lacks the search attribute\(s\) CuaStatus=Keyword, .*CuaCost=Double/,
      );
      expect(String(refused)).toContain(
        'temporal operator search-attribute create --namespace bare --name CuaCost --type Double',
      );
      // The default namespace has them all: the same worker starts there.
      const worker = await createWorkerRuntime(loadConfig({ env: { ...env, TEMPORAL_NAMESPACE: 'default' } }));
      await worker.shutdown();
    } finally {
      await connection.close();
      await server.stop();
    }
  }, 90_000);
});
