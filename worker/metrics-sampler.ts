// The worker's gauges (src/common/metrics.ts), set on a clock: its sessions in use and opens waiting in line (every
// few seconds, from its pools), and its task queue's tasks waiting for a person (a visibility count of running tasks
// whose CuaStatus is waiting_for_user). Every worker counts the same figure for its queue instead of one being
// elected: a count is one cheap visibility call, no lease has to survive a worker's death, and a dashboard reads
// max() over the workers (never sum()).
import type { Client } from '@temporalio/client';
import { setSessionGauges, setTasksWaitingForUser } from '../src/common/metrics';
import type { BrowserPool } from '../src/browser/pool';
import type { DesktopPool } from '../src/desktop';

const SESSION_SAMPLE_MS = 5_000;

export interface SamplerSources {
  pool: Pick<BrowserPool, 'size' | 'waiting'>;
  desktops?: Pick<DesktopPool, 'size'>;
  /** A client on the worker's connection and namespace, for the visibility count. */
  client: Pick<Client, 'workflow'>;
  taskQueue: string;
  waitingCountMs: number;
  log: (line: string) => void;
}

/** The visibility query of the tasks on `taskQueue` waiting for a person. */
export function waitingForUserQuery(taskQueue: string): string {
  return `TaskQueue = '${taskQueue.replace(/'/g, "\\'")}' AND ExecutionStatus = 'Running' AND CuaStatus = 'waiting_for_user'`;
}

/** Starts setting the gauges now and on their clocks; returns a function that stops it. */
export function startMetricsSampler(s: SamplerSources): () => void {
  const sessions = () => {
    setSessionGauges('browser', s.pool.size, s.pool.waiting);
    if (s.desktops) setSessionGauges('desktop', s.desktops.size, 0);
  };
  let failing = false;
  const count = async () => {
    try {
      const { count: n } = await s.client.workflow.count(waitingForUserQuery(s.taskQueue));
      setTasksWaitingForUser(n, { task_queue: s.taskQueue });
      if (failing) s.log('metrics: counting the tasks waiting for a person works again');
      failing = false;
    } catch (err) {
      // Once per outage: the gauge keeps its last value meanwhile.
      if (!failing) s.log(`metrics: cannot count the tasks waiting for a person: ${(err as Error).message}`);
      failing = true;
    }
  };
  sessions();
  void count();
  const timers = [setInterval(sessions, SESSION_SAMPLE_MS), setInterval(() => void count(), s.waitingCountMs)];
  for (const t of timers) t.unref();
  return () => timers.forEach(clearInterval);
}
