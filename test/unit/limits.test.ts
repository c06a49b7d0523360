// Specification of the worker limits derived from the machine (src/runtime/limits.ts): browser slots, activity and
// workflow task slots for a few machine shapes, configured values kept, and the summary the worker prints.
import os from 'node:os';
import { describe, expect, it } from 'vitest';

import { deriveLimits, describeLimits, thisMachine } from '../../src/runtime/limits';

const GiB = 1024 ** 3;

describe('deriveLimits: machine shapes', () => {
  it.each<[string, number, number, number, number, number]>([
    // name, cores, memory GiB → browser slots, activity slots, workflow task slots
    ['the 2-core, 24 GiB dev box: bound by cores', 2, 24, 4, 10, 8],
    ['1 core, 1 GiB: memory below the worker share still gives one slot', 1, 1, 1, 4, 4],
    ['1 core, 1.5 GiB', 1, 1.5, 1, 4, 4],
    ['4 cores, 4 GiB: cores and memory agree', 4, 4, 8, 18, 16],
    ['8 cores, 4 GiB: bound by memory', 8, 4, 8, 18, 32],
    ['16 cores, 64 GiB: capped at 32 slots', 16, 64, 32, 66, 64],
    ['64 cores, 256 GiB: workflow task slots capped at 64', 64, 256, 32, 66, 64],
  ])('%s', (_name, cores, memGiB, slots, activities, workflowTasks) => {
    expect(deriveLimits({ cores, memoryBytes: memGiB * GiB })).toEqual({
      slots,
      maxConcurrentActivities: activities,
      maxConcurrentWorkflowTasks: workflowTasks,
    });
  });
});

describe('deriveLimits: configured values', () => {
  const devBox = { cores: 2, memoryBytes: 24 * GiB };

  it('keeps configured slots and derives activity slots from them', () => {
    expect(deriveLimits(devBox, { slots: 16 })).toEqual({
      slots: 16,
      maxConcurrentActivities: 34,
      maxConcurrentWorkflowTasks: 8,
    });
  });

  it('keeps every configured value', () => {
    const given = { slots: 3, maxConcurrentActivities: 5, maxConcurrentWorkflowTasks: 7 };
    expect(deriveLimits(devBox, given)).toEqual(given);
  });
});

describe('thisMachine and describeLimits', () => {
  it('reads usable cores and at most the total memory', () => {
    const machine = thisMachine();
    expect(machine.cores).toBe(os.availableParallelism());
    expect(machine.memoryBytes).toBeGreaterThan(0);
    expect(machine.memoryBytes).toBeLessThanOrEqual(os.totalmem());
  });

  it('says which limits were derived and from what', () => {
    const limits = { slots: 16, maxConcurrentActivities: 34, maxConcurrentWorkflowTasks: 8 };
    expect(
      describeLimits(limits, ['maxConcurrentActivities', 'maxConcurrentWorkflowTasks'], {
        cores: 2,
        memoryBytes: 23.4 * GiB,
      }),
    ).toBe(
      '16 browser slots (configured), 34 activity slots (derived), 8 workflow task slots (derived) ' +
        'on 2 cores, 23.4 GiB',
    );
  });
});
