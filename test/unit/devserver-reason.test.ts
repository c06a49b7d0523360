// Why a dev server start failed, in one line: its own `Error:` line, also when its services' warnings follow it.
import { describe, expect, it } from 'vitest';
import { startFailureReason } from '../../src/infra/devserver';

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

  it('falls back to the last three lines, joined, when there is no Error line', () => {
    expect(startFailureReason('one\ntwo\nthree\nfour\n')).toBe('two | three | four');
    expect(startFailureReason('')).toBe('');
  });
});
