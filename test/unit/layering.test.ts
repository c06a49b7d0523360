// The layering rule (.dependency-cruiser.cjs) that `npm run lint` applies: it refuses an upward import, type-only
// included, an import circle and a folder in no layer (a fixture tree breaks each once), and the project passes it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../..');
const config = path.join(root, '.dependency-cruiser.cjs');
const depcruise = path.join(root, 'node_modules', '.bin', 'depcruise');

async function cruise(cwd: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await promisify(execFile)(depcruise, ['--config', config, '--output-type', 'err', '.'], { cwd });
    return { code: 0, out: stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('the layering rule', () => {
  it('refuses the fixture: a type-only upward import, a circle, a folder in no layer', async () => {
    const { code, out } = await cruise(path.join(root, 'test/fixtures/layering'));
    expect(code).not.toBe(0);
    expect(out).toContain('upward-from-src-coords: src/coords/upward.ts → cli/command.ts');
    expect(out).toMatch(/no-circular: src\/agent\/p[io]ng\.ts/);
    expect(out).toContain('not-in-a-layer: stray/loose.ts');
    expect(out).toMatch(/3 dependency violations/);
  }, 60_000);

  it('passes the project itself', async () => {
    const { code, out } = await cruise(root);
    expect(out).toMatch(/no dependency violations found \((\d{3,}) modules/);
    expect(code).toBe(0);
  }, 120_000);

  it('has a layer for every folder that holds source code', () => {
    const layers = (createRequire(__filename)(config) as { LAYERS: string[] }).LAYERS;
    const skipped = new Set(['node_modules', 'dist', 'test', 'bin', '.tools', '.git']);
    const sourceFolders = (dir: string): string[] =>
      fs
        .readdirSync(path.join(root, dir), { withFileTypes: true })
        .filter((e) => e.isDirectory() && !skipped.has(e.name))
        .flatMap((e) => {
          const rel = dir ? `${dir}/${e.name}` : e.name;
          return rel === 'src' ? sourceFolders(rel) : hasTs(rel) ? [rel] : [];
        });
    const hasTs = (dir: string): boolean =>
      fs
        .readdirSync(path.join(root, dir), { withFileTypes: true })
        .some((e) => (e.isDirectory() ? hasTs(`${dir}/${e.name}`) : /\.[cm]?ts$/.test(e.name)));
    const folders = sourceFolders('');
    expect(folders).toEqual(expect.arrayContaining(['src/contract', 'workflows', 'activities', 'api', 'cli']));
    expect(folders.filter((f) => !layers.includes(f))).toEqual([]);
    expect(new Set(layers).size).toBe(layers.length);
  });
});
