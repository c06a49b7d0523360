// Part of the step section: the orchestration floor of a step on this server and machine. A workflow with the task
// workflow's Temporal work per step and none of its code (bench/floor/workflow.ts), whose activities sleep as long as
// the plain loop's decide and act took, on workers set up as the product's are (sticky schedule-to-start, a session
// queue). What a step takes beyond the sleeps is what the server and the SDK cost per step, whatever the workflow's
// own code does: the smallest (b) − (a) the step section can show with that shape. Run twice: with a decide activity
// before each act (the shape today), and with the act alone (a decide folded into the act).
import path from 'node:path';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { Bench } from '../context';
import { eventMs, workflowTaskRecords } from '../history';
import { STICKY_SCHEDULE_TO_START, quietBundler } from '../../worker/main';
import type { FloorActivities, FloorInput, FloorReply } from '../floor/workflow';
import { round, summarize } from '../stats';
import type { Summary } from '../stats';

const FLOOR_WORKFLOW = path.resolve(__dirname, '..', 'floor', 'workflow.ts');
const FLOOR_STEPS = 30;
/** Steps left out at the start (a cold cache, the first activities). */
const FLOOR_WARMUP = 3;

/** One shape's floor: per step beyond the activities' own time, and its workflow tasks' wait and run. */
export interface FloorShape {
  beyond: Summary;
  wftWait: Summary;
  wftRun: Summary;
}

export interface FloorFigures {
  /** A decide and an act a step (today's shape), and an act alone. */
  twoActivities: FloorShape;
  oneActivity: FloorShape;
}

/** Sleeps `ms`; the reply says how long that took (a timer may fire late). */
async function sleepFor(step: number, ms: number): Promise<FloorReply> {
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  return { step, tookMs: performance.now() - t0, text: 'x'.repeat(200) };
}

/** Each step's wall time from its act's schedule to the next one's, minus the activities' own time in between. */
async function floorRun(b: Bench, workers: FloorWorkers, input: Omit<FloorInput, 'sessionQueue'>): Promise<FloorShape> {
  const { client } = await b.temporal();
  const handle = await client.workflow.start('stepFloor', {
    taskQueue: workers.queue,
    workflowId: `floor-${input.decide ? 'two' : 'one'}-${Date.now().toString(36)}`,
    args: [{ ...input, sessionQueue: workers.sessionQueue }],
  });
  const took = await handle.result();
  const events = (await handle.fetchHistory()).events ?? [];
  const actScheduled = events
    .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'floorAct')
    .map(eventMs);
  // From one act's schedule to the next: that act, then the next step's decide.
  const own = (i: number) => (took.act[i] ?? 0) + (took.decide[i + 1] ?? 0);
  const beyond = actScheduled.slice(1).map((at, i) => at - (actScheduled[i] as number) - own(i));
  const tasks = workflowTaskRecords(events).filter((t) => t.startedAt !== null && t.completedAt !== null);
  return {
    beyond: summarize(beyond.slice(FLOOR_WARMUP)),
    wftWait: summarize(tasks.map((t) => (t.startedAt as number) - t.scheduledAt)),
    wftRun: summarize(tasks.map((t) => (t.completedAt as number) - (t.startedAt as number))),
  };
}

interface FloorWorkers {
  queue: string;
  sessionQueue: string;
}

/** The floor with the plain loop's activity times (p50, ms): per step beyond the sleeps, both shapes. */
export async function stepFloor(b: Bench, decideMs: number, actMs: number): Promise<FloorFigures> {
  const { server } = await b.temporal();
  const sleeps = { decideMs: Math.round(decideMs), actMs: Math.round(actMs) };
  // The timeouts a task's activities get: the floor's step runs under the same options.
  const { timing } = await b.taskInput({ taskId: 'floor', script: 'floor' });
  b.log(
    `[bench] step floor: ${FLOOR_STEPS}-step workflows whose activities sleep ${sleeps.decideMs} + ${sleeps.actMs} ms`,
  );
  const connection = await NativeConnection.connect({ address: server.address });
  const queue = `bench-floor-${Date.now().toString(36)}`;
  const workers = { queue, sessionQueue: `${queue}-session` };
  const activities: FloorActivities = { floorDecide: sleepFor, floorAct: sleepFor };
  const shared = await Worker.create({
    connection,
    taskQueue: workers.queue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: FLOOR_WORKFLOW, logger: quietBundler }),
    activities,
    stickyQueueScheduleToStartTimeout: STICKY_SCHEDULE_TO_START,
  });
  const session = await Worker.create({ connection, taskQueue: workers.sessionQueue, activities });
  try {
    const common = { steps: FLOOR_STEPS, timing, ...sleeps };
    return await shared.runUntil(() =>
      session.runUntil(async () => {
        const twoActivities = await floorRun(b, workers, { ...common, decide: true });
        const oneActivity = await floorRun(b, workers, { ...common, decide: false });
        return { twoActivities, oneActivity };
      }),
    );
  } finally {
    await connection.close();
  }
}

const brief = (s: Summary) => ({ n: s.n, p50: round(s.p50), p95: round(s.p95) });
export const floorBrief = (s: FloorShape) => ({
  beyondActivitiesMs: brief(s.beyond),
  workflowTask: { waitMs: brief(s.wftWait), runMs: brief(s.wftRun) },
});
