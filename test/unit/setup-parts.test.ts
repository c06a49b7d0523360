// Setup in parts: a command checks and installs only the part it uses, so the demo never waits for the cluster's
// Go builds; scripts/setup.sh refuses a part it does not know.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { missingTools, SETUP_PARTS } from '../../src/infra/tools';
import { PROJECT_ROOT } from '../../src/infra/paths';

describe('setup parts', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    // An empty build cache: the cluster's pieces are missing, whatever this machine has built.
    process.env.CUA_CACHE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-empty-cache-'));
    delete process.env.CUA_RCLONE_BIN;
    delete process.env.CUA_TEMPORAL_SERVER_DIR;
  });
  afterEach(() => {
    process.env = { ...saved };
  });

  it("the demo's part does not look at the cluster's pieces", () => {
    const cluster = missingTools(['cluster']).map((e) => e.tool);
    expect(cluster).toEqual(
      expect.arrayContaining([expect.stringMatching(/^rclone/), expect.stringMatching(/Temporal server/)]),
    );
    const demo = missingTools(['demo']).map((e) => e.tool);
    expect(demo.filter((t) => /rclone|Temporal server|Python|test server/.test(t))).toEqual([]);
  });

  it('the demo part is missing when its tools are', () => {
    process.env.PATH = '/nonexistent';
    process.env.CUA_TEMPORAL_BIN = '/nonexistent/temporal';
    delete process.env.CUA_CHROMIUM;
    const demo = missingTools(['demo']).map((e) => e.tool);
    expect(demo).toContain('Chromium');
  });

  it('each part says what it installs and about how long it takes', () => {
    for (const text of Object.values(SETUP_PARTS)) expect(text).toMatch(/about \d+/);
  });

  it('scripts/setup.sh refuses an unknown part in one line, before installing anything', () => {
    const r = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'setup.sh'), 'demo', 'everything'], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stdout.trim()).toBe(
      "[setup] ERROR: unknown part 'everything' (the parts: demo, desktop, tests, cluster, traces; none for all but traces)",
    );
  });
});
