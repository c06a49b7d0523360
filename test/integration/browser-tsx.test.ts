// In-page scripts must work in code compiled by tsx/esbuild (the CLI and the workers), not only under vitest:
// esbuild wraps nested named functions in `__name(...)`, which a page does not define unless we shim it.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const SCRIPT = path.resolve(__dirname, '../fixtures/browser/settle-under-tsx.ts');

describe('browser layer under tsx', () => {
  it('detects a quiet DOM after a click on a static page (the in-page observer runs)', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', SCRIPT], {
      timeout: 60_000,
    });
    const report = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { dom?: boolean; network?: boolean };
    expect(report).toMatchObject({ dom: true, network: true });
  }, 90_000);
});
