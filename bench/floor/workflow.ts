// The bench's floor workflow (bench/sections/step-floor.ts): the Temporal work of a steady step of the task workflow
// with none of its code. Each step upserts the status and step search attributes, runs a decide activity on the
// workflow's queue (when `decide`) and an act on a session queue, and upserts them again after the act (as the task
// workflow's limits do); the activities only sleep. Their options come from the task workflow's own proxies (the
// decide's from its model proxy, the act's from its session one), so the two stay alike.
import { upsertSearchAttributes } from '@temporalio/workflow';
import type { TaskInput } from '../../src/contract/task';
import { activityProxies } from '../../workflows/activity-proxies';
import { STATUS_SEARCH_ATTRIBUTE, STEP_SEARCH_ATTRIBUTE } from '../../workflows/messages';

/** An activity's reply: its step, how long it took inside (ms), and a few hundred bytes as a real result has. */
export interface FloorReply {
  step: number;
  tookMs: number;
  text: string;
}

export interface FloorActivities {
  floorDecide(step: number, ms: number): Promise<FloorReply>;
  floorAct(step: number, ms: number): Promise<FloorReply>;
}

export interface FloorInput {
  steps: number;
  /** How long each activity sleeps. */
  decideMs: number;
  actMs: number;
  /** Each step has a decide activity before its act (as the task workflow has); false: the act alone. */
  decide: boolean;
  sessionQueue: string;
  /** The task's timing (heartbeat and session schedule-to-start timeouts), as a task input has it. */
  timing: TaskInput['timing'];
}

/** Each step's activities' own time (ms), in step order (decide 0 without a decide). */
export interface FloorTimes {
  decide: number[];
  act: number[];
}

export async function stepFloor(input: FloorInput): Promise<FloorTimes> {
  const proxies = activityProxies(input.timing, () => 0);
  const session = { sessionId: 'floor', taskQueue: input.sessionQueue, generation: 1 };
  // The proxies are typed with the task's activities; the floor's workers register its own two under those options.
  const decideOn = (step: number) => proxies.model(`step ${step} · decide`) as unknown as FloorActivities;
  const actOn = (step: number) => proxies.onSession(session, `step ${step} · act`) as unknown as FloorActivities;
  const publish = (step: number) =>
    upsertSearchAttributes([
      { key: STATUS_SEARCH_ATTRIBUTE, value: 'running' },
      { key: STEP_SEARCH_ATTRIBUTE, value: step },
    ]);
  const took: FloorTimes = { decide: [], act: [] };
  for (let step = 1; step <= input.steps; step++) {
    publish(step);
    took.decide.push(input.decide ? (await decideOn(step).floorDecide(step, input.decideMs)).tookMs : 0);
    took.act.push((await actOn(step).floorAct(step, input.actMs)).tookMs);
    publish(step);
  }
  return took;
}
