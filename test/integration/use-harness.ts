// The harness as a suite fixture: started before the suite's tests, closed after them.
import { afterAll, beforeAll } from 'vitest';
import { startHarness } from './harness';
import type { Harness, HarnessOptions } from './harness';

/** Starts a harness for the enclosing suite (before its tests) and closes it after them. */
export function useHarness(set: (h: Harness) => void, opts: HarnessOptions = {}): void {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness(opts);
    set(harness);
  }, 120_000);
  afterAll(async () => {
    await harness?.close();
  });
}
