// The task workflow's messages: its Update, Signal and queries, and the search attributes it sets. One layer above
// the pure contract (src/contract/task.ts) because the definitions come from the Temporal SDK.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey } from '@temporalio/common';

import type {
  ControlAccepted,
  HandbackInput,
  ReplyInput,
  SayInput,
  StepSummary,
  TakeoverLease,
  TaskStatus,
} from '../src/contract/task';

/** Search attributes registered on the dev server by our scripts (`cua server`, tests). */
export const STATUS_SEARCH_ATTRIBUTE = defineSearchAttributeKey('CuaStatus', 'KEYWORD');
export const STEP_SEARCH_ATTRIBUTE = defineSearchAttributeKey('CuaStep', 'INT');
/** What the task's model calls cost so far, in US dollars (issue 30). */
export const COST_SEARCH_ATTRIBUTE = defineSearchAttributeKey('CuaCost', 'DOUBLE');
/** A scheduled run's schedule (set by the schedule when it starts the run). */
export const SCHEDULE_SEARCH_ATTRIBUTE = defineSearchAttributeKey('CuaSchedule', 'KEYWORD');

export const replyUpdate = defineUpdate<{ accepted: true; step: number }, [ReplyInput]>('reply');
export const replySignal = defineSignal<[ReplyInput]>('replySignal');
export const statusQuery = defineQuery<TaskStatus>('status');
export const stepsQuery = defineQuery<StepSummary[]>('steps');

// Controls (workflows/task-control.ts): each an Update whose validator refuses a bad or stale request in one line.
/** Pause after the step under way; answers once the task is paused (or has ended). */
export const pauseUpdate = defineUpdate<ControlAccepted, []>('pause');
export const resumeUpdate = defineUpdate<ControlAccepted, []>('resume');
/** A message the model reads with its next observation. */
export const sayUpdate = defineUpdate<ControlAccepted, [SayInput]>('say');
/** Pause after the step under way and lease the live browser to a person; answers with the lease once it is given. */
export const takeoverUpdate = defineUpdate<TakeoverLease, []>('takeover');
/** End the takeover: the agent goes on, told what changed. */
export const handbackUpdate = defineUpdate<ControlAccepted, [HandbackInput]>('handback');
