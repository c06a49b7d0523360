// Specification of a worker's slots in the configuration: `slots`, or its wire name `maxSessions`, in the browser and
// desktop sections, and CUA_SLOTS or CUA_MAX_SESSIONS; both given and different is a one-line ConfigError.
import { describe, expect, it } from 'vitest';

import { ConfigError } from '../../src/common/config-error';
import { configFromObject } from '../../src/runtime/config';
import type { Config } from '../../src/runtime/config';
import type { MachineShape } from '../../src/runtime/limits';

/** The 2-core, 24 GiB dev box (4 browser slots derived). */
const DEV_BOX: MachineShape = { cores: 2, memoryBytes: 24 * 1024 ** 3 };

const load = (raw: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Config =>
  configFromObject(raw, { env, machine: DEV_BOX });

/** A one-line ConfigError's message, or undefined when the config loads. */
function refusal(raw: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): string | undefined {
  try {
    load(raw, env);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
}

describe('config: slots, or maxSessions', () => {
  it.each<[string, Record<string, unknown>, number, number]>([
    // case, raw config, browser slots, desktop slots
    ['neither key: derived (browser), 4 (desktop)', {}, 4, 4],
    ['slots', { browser: { slots: 6 }, desktop: { slots: 2 } }, 6, 2],
    ['maxSessions (the wire name)', { browser: { maxSessions: 6 }, desktop: { maxSessions: 2 } }, 6, 2],
    ['both, the same number', { browser: { slots: 3, maxSessions: 3 }, desktop: { slots: 0, maxSessions: 0 } }, 3, 0],
    ['one key per section', { browser: { maxSessions: 5 }, desktop: { slots: 1 } }, 5, 1],
  ])('%s', (_case, raw, browser, desktop) => {
    const cfg = load(raw);
    expect([cfg.browser.slots, cfg.desktop.slots]).toEqual([browser, desktop]);
    expect(Object.keys(cfg.browser)).not.toContain('maxSessions');
    expect(Object.keys(cfg.desktop)).not.toContain('maxSessions');
  });

  it('a configured browser slots count is a configured limit (activity slots follow it), by either key', () => {
    for (const browser of [{ slots: 6 }, { maxSessions: 6 }]) {
      const cfg = load({ browser });
      expect(cfg.limits.derived).toEqual(['maxConcurrentActivities', 'maxConcurrentWorkflowTasks']);
      expect(cfg.worker.maxConcurrentActivities).toBe(14);
    }
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['browser', { browser: { slots: 3, maxSessions: 4 } }, /browser\.slots: is 3 but maxSessions .* is 4; give one/],
    ['desktop', { desktop: { slots: 0, maxSessions: 2 } }, /desktop\.slots: is 0 but maxSessions .* is 2; give one/],
  ])('refuses %s slots and maxSessions that differ, in one line', (_case, raw, message) => {
    const text = refusal(raw);
    expect(text).toMatch(message);
    expect(text).not.toContain('\n');
  });

  it('still checks each key: a bad maxSessions is named as written', () => {
    expect(refusal({ browser: { maxSessions: 0 } })).toMatch(/browser\.maxSessions/);
    expect(refusal({ desktop: { slots: 65 } })).toMatch(/desktop\.slots/);
  });
});

describe('config: CUA_SLOTS, or CUA_MAX_SESSIONS', () => {
  it.each<[string, Record<string, unknown>, NodeJS.ProcessEnv, number]>([
    ['CUA_SLOTS', {}, { CUA_SLOTS: '7' }, 7],
    ['CUA_MAX_SESSIONS (the wire name)', {}, { CUA_MAX_SESSIONS: '7' }, 7],
    ['both, the same number', {}, { CUA_SLOTS: '7', CUA_MAX_SESSIONS: '7' }, 7],
    ["CUA_SLOTS over the file's maxSessions", { browser: { maxSessions: 2 } }, { CUA_SLOTS: '7' }, 7],
    ["CUA_MAX_SESSIONS over the file's slots", { browser: { slots: 2 } }, { CUA_MAX_SESSIONS: '7' }, 7],
    ["over both of the file's keys", { browser: { slots: 2, maxSessions: 3 } }, { CUA_SLOTS: '7' }, 7],
  ])('%s', (_case, raw, env, slots) => {
    expect(load(raw, env).browser.slots).toBe(slots);
  });

  it('refuses CUA_SLOTS and CUA_MAX_SESSIONS that differ, in one line', () => {
    const text = refusal({}, { CUA_SLOTS: '7', CUA_MAX_SESSIONS: '8' });
    expect(text).toBe('CUA_SLOTS=7 and CUA_MAX_SESSIONS=8 (its other name) differ: set one');
  });

  it('a value that is no number names the variable it came from', () => {
    expect(refusal({}, { CUA_SLOTS: 'many' })).toMatch(/browser\.slots/);
    expect(refusal({}, { CUA_MAX_SESSIONS: 'many' })).toMatch(/browser\.maxSessions/);
  });
});
