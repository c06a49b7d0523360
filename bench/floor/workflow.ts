// The bench's floor workflow (bench/sections/step-floor.ts): the Temporal work of a steady step of the task workflow
// with none of its code. Each step upserts the status and step search attributes, runs a decide activity on the
// workflow's queue (when `decide`) and an act on a session queue, and upserts them again after the act (as the task
// workflow's limits do); the activities only sleep.
import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
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
}

/** Each step's activities' own time (ms), in step order (decide 0 without a decide). */
export interface FloorTimes {
  decide: number[];
  act: number[];
}

export async function stepFloor(input: FloorInput): Promise<FloorTimes> {
  const shared = proxyActivities<FloorActivities>({ startToCloseTimeout: '1m', heartbeatTimeout: '2500ms' });
  const session = proxyActivities<FloorActivities>({
    taskQueue: input.sessionQueue,
    scheduleToStartTimeout: '5s',
    startToCloseTimeout: '1m',
    heartbeatTimeout: '2500ms',
    retry: { maximumAttempts: 1 },
  });
  const publish = (step: number) =>
    upsertSearchAttributes([
      { key: STATUS_SEARCH_ATTRIBUTE, value: 'running' },
      { key: STEP_SEARCH_ATTRIBUTE, value: step },
    ]);
  const took: FloorTimes = { decide: [], act: [] };
  for (let step = 1; step <= input.steps; step++) {
    publish(step);
    took.decide.push(input.decide ? (await shared.floorDecide(step, input.decideMs)).tookMs : 0);
    took.act.push((await session.floorAct(step, input.actMs)).tookMs);
    publish(step);
  }
  return took;
}
