// Worker limits derived from the machine: browser slots, activity slots and workflow task slots, for the ones the
// configuration (file or environment) leaves unset. Pure (deriveLimits, describeLimits) plus one reader of the machine.
import os from 'node:os';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * Memory one browser session is budgeted: the benchmark measures 75–125 MB PSS (315–390 MB summed RSS) per session on
 * its small fixture pages; real sites weigh more, so a session is given 350 MiB.
 */
export const SESSION_MEMORY_BYTES = 350 * MiB;
/** Left to the worker process itself (Node, the workflow bundle, Chromium's shared browser process). */
export const WORKER_MEMORY_BYTES = 1 * GiB;
export const MAX_DERIVED_SESSIONS = 32;

export type MachineShape = { cores: number; memoryBytes: number };

/** `slots`: how many browser sessions the worker holds at once (config `browser.slots`, or `browser.maxSessions`). */
export type WorkerLimits = { slots: number; maxConcurrentActivities: number; maxConcurrentWorkflowTasks: number };

export type LimitName = keyof WorkerLimits;

const clamp = (n: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, n));

/**
 * The limits for a machine, keeping the ones `given` (configured) as they are:
 * - slots = clamp(min(2 × cores, (memory − 1 GiB) / 350 MiB), 1, 32). Every session's page work (screenshots,
 *   rendering, settling) is CPU-bound, and tasks beyond the limit wait in line for a freed browser (handed over at
 *   once), so more sessions than the cores can serve only slow every task down. Measured on the 2-core dev box
 *   (`npm run bench`, 2026-12-01): 4 sessions against 8 gave the same steps/s at 4, 16 and 32 tasks (3.9 / 3.9 / 4.3
 *   against 3.9 / 3.9 / 4.7) with a lower p95 step time at 16 tasks (1.1 s against 1.3 s; ×3.2 of a single task's
 *   against ×4.1) and shorter tasks end to end (p50 22 s against 28 s at 16 tasks). Memory still bounds it on small
 *   machines.
 * - activity slots = 2 × slots + 2 (each of the two workers gets this many). A task runs one activity at a time
 *   (observe → decide → act), so one slot per session is the need; the second covers an attempt that timed out but
 *   still holds its slot while its retry runs, and 2 more tasks starting or finishing without a session. More slots
 *   than that only let work in beyond what the sessions bound.
 * - workflow task slots = clamp(4 × cores, 4, 64). Workflow tasks are short CPU bursts; a few per core overlap their
 *   server round trips, more only queue inside this process where another worker cannot take them.
 */
export function deriveLimits(machine: MachineShape, given: Partial<WorkerLimits> = {}): WorkerLimits {
  const cores = Math.max(1, Math.floor(machine.cores));
  const byMemory = Math.floor((machine.memoryBytes - WORKER_MEMORY_BYTES) / SESSION_MEMORY_BYTES);
  const slots = given.slots ?? clamp(Math.min(2 * cores, byMemory), 1, MAX_DERIVED_SESSIONS);
  return {
    slots,
    maxConcurrentActivities: given.maxConcurrentActivities ?? 2 * slots + 2,
    maxConcurrentWorkflowTasks: given.maxConcurrentWorkflowTasks ?? clamp(4 * cores, 4, 64),
  };
}

/**
 * This machine: usable cores (`os.availableParallelism`, which honours CPU affinity) and total memory, or the
 * cgroup's memory limit when lower. Total, not free: a snapshot of free memory at start would make the limits depend
 * on whatever else happened to run then.
 */
export function thisMachine(): MachineShape {
  const constrained = process.constrainedMemory?.() ?? 0;
  const total = os.totalmem();
  return { cores: os.availableParallelism(), memoryBytes: constrained > 0 ? Math.min(total, constrained) : total };
}

/** For the "worker ready" line: `4 browser slots (derived), 10 activity slots (derived), … on 2 cores, 23.4 GiB`. */
export function describeLimits(limits: WorkerLimits, derived: readonly LimitName[], machine: MachineShape): string {
  const mark = (name: LimitName) => (derived.includes(name) ? 'derived' : 'configured');
  const gib = (machine.memoryBytes / GiB).toFixed(1);
  return (
    `${limits.slots} browser slots (${mark('slots')}), ` +
    `${limits.maxConcurrentActivities} activity slots (${mark('maxConcurrentActivities')}), ` +
    `${limits.maxConcurrentWorkflowTasks} workflow task slots (${mark('maxConcurrentWorkflowTasks')}) ` +
    `on ${machine.cores} cores, ${gib} GiB`
  );
}
