// safeName: whatever a server suggests, the saved file lands inside the downloads folder under a usable name.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { safeName } from '../../src/browser/downloads';

describe('safeName', () => {
  it.each([
    ['report.pdf', 'report.pdf'],
    ['Q3 report (final).pdf', 'Q3 report (final).pdf'],
    ['..', 'download'],
    ['.', 'download'],
    ['...', 'download'],
    ['', 'download'],
    ['   ', 'download'],
    ['../../etc/passwd', 'passwd'],
    ['..\\..\\evil.exe', '__.._evil.exe'],
    ['/etc/', 'etc'],
    ['.bashrc', '_bashrc'],
    ['..hidden', '_hidden'],
    ['a/..', 'download'],
    ['résumé<script>.txt', 'r_sum__script_.txt'],
    ['名前.txt', '__.txt'],
  ])('%j → %j', (suggested, expected) => {
    expect(safeName(suggested)).toBe(expected);
  });

  it('keeps a 300-character name to 200 characters, extension kept', () => {
    const name = safeName(`${'a'.repeat(300)}.txt`);
    expect(name).toHaveLength(200);
    expect(name.endsWith('aaa.txt')).toBe(true);
  });

  it('never leaves the folder', () => {
    const dir = '/runs/r1/downloads';
    for (const suggested of ['..', '.', '../x', '..\\x', 'a/../..', `${'.'.repeat(300)}`, '\u0000', 'x'.repeat(300)]) {
      const target = path.join(dir, safeName(suggested));
      expect(path.dirname(target), JSON.stringify(suggested)).toBe(dir);
    }
  });
});
