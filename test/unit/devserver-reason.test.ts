// Why a dev server start failed, in one line: its own `Error:` line, also when its services' warnings follow it.
// And the free ports tests start servers on: below the kernel's ephemeral range, free when picked.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { FREE_PORT_RANGE, freePort, startFailureReason } from '../../src/infra/devserver';

describe('startFailureReason', () => {
  it("picks the server's Error line out of the warnings printed after it (as a CI run's log had it)", () => {
    const output = [
      'Temporal CLI 1.9.1 (Server 1.32.0, UI 2.54.1)',
      'Error: failed starting server: failed creating namespaces: unable to create SQLite admin DB: database is locked (5) (SQLITE_BUSY)',
      'time=2026-12-01T19:06:36.098 level=WARN msg="Failed to poll for task." service=worker',
      'time=2026-12-01T19:06:36.098 level=WARN msg="network dial error" service=client',
      'time=2026-12-01T19:06:36.101 level=WARN msg="Failed to poll for task." service=worker',
      '',
    ].join('\n');
    expect(startFailureReason(output)).toBe(
      'Error: failed starting server: failed creating namespaces: unable to create SQLite admin DB: database is locked (5) (SQLITE_BUSY)',
    );
  });

  it('picks the first logged error when a panic follows it (a port taken between the pick and the bind)', () => {
    const output = [
      'time=2026-12-06T05:22:24.112 level=ERROR msg="Failed to start gRPC listener" error="listen tcp 127.0.0.1:36643: bind: address already in use" service=frontend address=127.0.0.1:36643',
      'panic: runtime error: invalid memory address or nil pointer dereference',
      '[signal SIGSEGV: segmentation violation code=0x1 addr=0x20 pc=0x2bb0889]',
      '',
      'goroutine 1 [running]:',
      'main.main()',
      '\t/home/runner/work/cli/cli/cmd/temporal/main.go:18 +0x8e',
    ].join('\n');
    expect(startFailureReason(output)).toBe(
      'Failed to start gRPC listener: listen tcp 127.0.0.1:36643: bind: address already in use',
    );
    expect(startFailureReason('time=x level=ERROR msg="Failed \\"quoted\\" thing" service=a\nlast')).toBe(
      'Failed \\"quoted\\" thing',
    );
  });

  it('falls back to the last three lines, joined, when there is no Error line', () => {
    expect(startFailureReason('one\ntwo\nthree\nfour\n')).toBe('two | three | four');
    expect(startFailureReason('')).toBe('');
  });
});

describe('freePort', () => {
  it('picks a port below the ephemeral range that can be listened on', async () => {
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(FREE_PORT_RANGE.from);
      expect(port).toBeLessThanOrEqual(FREE_PORT_RANGE.to);
      const srv = net.createServer();
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(port, '127.0.0.1', () => resolve());
      });
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    }
  });
});
