// The task workflow's messages: its Update, Signal and queries, and the search attributes it sets. One layer above
// the pure contract (src/contract/task.ts) because the definitions come from the Temporal SDK.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey } from '@temporalio/common';

import type { ReplyInput, StepSummary, TaskStatus } from '../src/contract/task';

/** Search attributes registered on the dev server by our scripts (`cua server`, tests). */
export const STATUS_SEARCH_ATTRIBUTE = defineSearchAttributeKey('CuaStatus', 'KEYWORD');
export const STEP_SEARCH_ATTRIBUTE = defineSearchAttributeKey('CuaStep', 'INT');

export const replyUpdate = defineUpdate<{ accepted: true; step: number }, [ReplyInput]>('reply');
export const replySignal = defineSignal<[ReplyInput]>('replySignal');
export const statusQuery = defineQuery<TaskStatus>('status');
export const stepsQuery = defineQuery<StepSummary[]>('steps');
