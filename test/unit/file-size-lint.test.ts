// The size limits lint applies (eslint.config.mjs): no .ts file over 500 lines outside test/, none over 300 in
// workflows/, and the task loop (workflows/agent-loop.ts) at most 250; tests are free of them. Read from the config
// ESLint computes for each path, so a limit dropped or loosened there fails here.
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../..');

async function maxLinesOf(file: string): Promise<number | null> {
  const eslint = new ESLint({ cwd: root });
  const config = (await eslint.calculateConfigForFile(path.join(root, file))) as {
    rules?: Record<string, unknown>;
  };
  const rule = config.rules?.['max-lines'] as [number | string, { max: number; skipBlankLines: boolean }] | undefined;
  if (!rule || rule[0] === 0 || rule[0] === 'off') return null;
  expect(rule[1].skipBlankLines).toBe(false);
  return rule[1].max;
}

describe('file size limits', () => {
  it.each([
    ['src/browser/pool.ts', 500],
    ['cli/commands/eval.ts', 500],
    ['activities/environments/browser-decide.ts', 500],
    ['workflows/evaluation-run.ts', 300],
    ['workflows/stages/sessions.ts', 300],
    ['workflows/agent-loop.ts', 250],
    ['test/unit/layering.test.ts', null],
  ])(
    '%s: at most %s lines',
    async (file, max) => {
      expect(await maxLinesOf(file)).toBe(max);
    },
    60_000,
  );
});
