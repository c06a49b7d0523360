// The layering rule (.dependency-cruiser.cjs) that `npm run lint` applies: each folder imports only the folders its
// entry names (type-only imports included), src/contract only src/common, no import circle, no folder without an
// entry (a fixture tree breaks each once); an entry may be a subfolder of another's; the table refuses a folder that
// names one below it or one with no entry; and the project passes.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../..');
const config = path.join(root, '.dependency-cruiser.cjs');
const depcruise = path.join(root, 'node_modules', '.bin', 'depcruise');
const source = fs.readFileSync(config, 'utf8');

async function cruise(cwd: string, configFile = config): Promise<{ code: number; out: string }> {
  try {
    const args = ['--config', configFile, '--output-type', 'err', '.'];
    const { stdout } = await promisify(execFile)(depcruise, args, { cwd });
    return { code: 0, out: stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** The table of a config text, as the file loads (it requires nothing). */
function depsOf(text: string): Record<string, string[]> {
  const mod = { exports: {} as { DEPS: Record<string, string[]> } };
  new Function('module', 'exports', text)(mod, mod.exports);
  return mod.exports.DEPS;
}

/** The config's text with `edit` applied (which must change it). */
function edited(edit: (text: string) => string): string {
  const text = edit(source);
  expect(text).not.toBe(source);
  return text;
}

const DEPS = depsOf(source);

describe('the layering rule', () => {
  it('refuses the fixture: a type-only import of a folder not named, contract → trajectory, a circle, a stray', async () => {
    const { code, out } = await cruise(path.join(root, 'test/fixtures/layering'));
    expect(code).not.toBe(0);
    expect(out).toContain('deps-of-src-coords: src/coords/upward.ts → cli/command.ts');
    expect(out).toContain('deps-of-src-contract: src/contract/reach.ts → src/trajectory/step.ts');
    expect(out).not.toContain('src/common/clamp.ts');
    expect(out).toMatch(/no-circular: src\/agent\/p[io]ng\.ts/);
    expect(out).toContain('not-in-deps: stray/loose.ts');
    expect(out).toMatch(/4 dependency violations/);
  }, 60_000);

  it('passes the project itself', async () => {
    const { code, out } = await cruise(root);
    expect(out).toMatch(/no dependency violations found \((\d{3,}) modules/);
    expect(code).toBe(0);
  }, 120_000);

  it('lets src/contract import src/common only', () => {
    expect(DEPS['src/contract']).toEqual(['src/common']);
    expect(DEPS['src/common']).toEqual([]);
  });

  it('gives a subfolder with an entry its own rule, and its outer folder must name it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-layering-'));
    try {
      const write = (file: string, text: string): void => {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
      };
      write('tsconfig.json', fs.readFileSync(path.join(root, 'test/fixtures/layering/tsconfig.json'), 'utf8'));
      write('src/trajectory/step.ts', 'export interface Step { index: number }\n');
      write('src/agent/inner/x.ts', "import type { Step } from '../../trajectory/step';\nexport type X = Step;\n");
      write('src/agent/outer.ts', "import type { X } from './inner/x';\nexport type Y = X;\n");
      const nest = (inner: string, outerAdds: string) => (text: string) =>
        text.replace(/^ {2}'src\/agent': \[/m, `  'src/agent/inner': [${inner}],\n  'src/agent': [${outerAdds}`);
      for (const [name, edit] of [
        ['strict.cjs', nest("'src/common'", '')],
        ['named.cjs', nest("'src/trajectory'", "'src/agent/inner', ")],
      ] as const) {
        write(name, edited(edit));
      }
      const strict = await cruise(dir, path.join(dir, 'strict.cjs'));
      expect(strict.out).toContain('deps-of-src-agent-inner: src/agent/inner/x.ts → src/trajectory/step.ts');
      expect(strict.out).toContain('deps-of-src-agent: src/agent/outer.ts → src/agent/inner/x.ts');
      expect(strict.out).toMatch(/2 dependency violations/);
      const named = await cruise(dir, path.join(dir, 'named.cjs'));
      expect(named.out).toMatch(/no dependency violations found/);
      expect(named.code).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses a table where a folder names one below it, or one with no entry', () => {
    const contractNames = (dep: string) => (text: string) =>
      text.replace("'src/contract': ['src/common']", `'src/contract': ['src/common', '${dep}']`);
    expect(() => depsOf(edited(contractNames('src/agent')))).toThrow(
      '.dependency-cruiser.cjs: src/contract names src/agent, whose entry is below it: move one of them',
    );
    expect(() => depsOf(edited(contractNames('src/nowhere')))).toThrow(
      '.dependency-cruiser.cjs: src/contract names src/nowhere, which has no entry',
    );
  });

  it('has one entry for every folder that holds source code', () => {
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
    expect(folders).toEqual(expect.arrayContaining(['src/contract', 'workflows', 'activities', 'client', 'cli']));
    expect(folders.filter((f) => !(f in DEPS))).toEqual([]);
    // An object literal keeps the last of two equal keys silently: count the entries as written.
    const table = source.slice(source.indexOf('const DEPS = {'), source.indexOf('\n};\n'));
    const written = [...table.matchAll(/^ {2}'?([\w/.-]+)'?: \[/gm)].map((m) => m[1]);
    expect(written).toEqual(Object.keys(DEPS));
  });
});
