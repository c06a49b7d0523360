// Chromium's launch flags: one `--disable-features` list, last, holding Playwright's own list, ours and any given.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, PLAYWRIGHT_DISABLED_FEATURES, withDisabledFeatures } from '../../src/infra/chromium';

const featureFlags = (args: readonly string[]) => args.filter((a) => a.startsWith('--disable-features='));
const features = (args: readonly string[]) => featureFlags(args)[0]?.slice('--disable-features='.length).split(',');

/** The list Playwright's launch passes as `--disable-features`, read from the installed playwright-core. */
function installedPlaywrightList(): string[] {
  const root = path.dirname(require.resolve('playwright-core/package.json'));
  const source = fs.readFileSync(path.join(root, 'lib', 'coreBundle.js'), 'utf8');
  const block = /disabledFeatures = \[([\s\S]*?)\]\.filter\(Boolean\)/.exec(source)?.[1];
  if (block === undefined) throw new Error("Playwright's list of disabled features was not found in its bundle.");
  const code = block.replace(/\/\/.*$/gm, '');
  return [...code.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string);
}

describe('Chromium launch flags', () => {
  it('carry one --disable-features, last, with the omnibox popup WebUI off and Playwright’s list kept', () => {
    expect(featureFlags(CHROMIUM_ARGS)).toHaveLength(1);
    expect(CHROMIUM_ARGS[CHROMIUM_ARGS.length - 1]).toMatch(/^--disable-features=/);
    expect(features(CHROMIUM_ARGS)).toEqual(expect.arrayContaining(['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup']));
    expect(features(CHROMIUM_ARGS)).toEqual(expect.arrayContaining([...PLAYWRIGHT_DISABLED_FEATURES]));
  });

  it('merge every list given into that one flag, each feature once, other flags in their order', () => {
    const args = withDisabledFeatures([...CHROMIUM_ARGS, '--foo', '--disable-features=A,B', '--disable-features=B,C']);
    expect(featureFlags(args)).toHaveLength(1);
    expect(args.filter((a) => !a.startsWith('--disable-features='))).toEqual([
      ...CHROMIUM_ARGS.filter((a) => !a.startsWith('--disable-features=')),
      '--foo',
    ]);
    const merged = features(args) ?? [];
    expect(merged).toEqual(expect.arrayContaining(['A', 'B', 'C', 'WebUIOmniboxPopup', 'PaintHolding']));
    expect(new Set(merged).size).toBe(merged.length);
  });

  it('repeat the installed Playwright’s own list (Chromium keeps only the last --disable-features)', () => {
    expect([...PLAYWRIGHT_DISABLED_FEATURES].sort()).toEqual(installedPlaywrightList().sort());
  });
});
