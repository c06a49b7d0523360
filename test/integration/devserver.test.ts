// Starting the dev server: a server that cannot start says why in the one-line error (its own last log lines), and a
// port that is taken is refused before anything starts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { DevServerError, freePort, startDevServer } from '../../src/infra/devserver';

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
});
