// Specification of the run folder's field-level contract (docs/architecture.md#the-run-folder-format): schemas,
// statuses, event ids, file names.
import { describe, expect, it } from 'vitest';

import { eventId, parseEventId } from '../../src/trajectory/ids';
import { screenshotName } from '../../src/trajectory/layout';
import {
  DataPointSchema,
  EventSchema,
  StatusFileSchema,
  TaskSchema,
  VerificationResultSchema,
} from '../../src/trajectory/schema';
import { TASK_STATES } from '../../src/contract/task-state';
import type { TaskState } from '../../src/contract/task-state';
import { fileEndReason, fromFileStatus, toFileStatus } from '../../src/trajectory/status';

const environment = {
  type: 'observation',
  id: 'step-0001-pre-g0',
  observation_type: 'environment',
  metadata: {},
  timestamp: '2026-07-20T10:15:01.000000',
  action_id: null,
  screenshot_path: 'screenshot_1_pre.png',
  url: 'http://127.0.0.1/',
  page_info: 'top of page',
};
const toolOutput = {
  type: 'observation',
  id: 'step-0001-tool-g0',
  observation_type: 'tool_output',
  metadata: {},
  timestamp: '2026-07-20T10:15:03.000000',
  action_id: 'step-0001-action-g0',
  output: 'I clicked at (720, 489).',
  error: '',
};
const userMessage = (message_type: string) => ({
  type: 'observation',
  id: 'user-0003-reply-g0',
  observation_type: 'user_message',
  metadata: {},
  timestamp: '2026-07-20T10:16:00Z',
  action_id: null,
  content: 'from San Francisco',
  message_type,
});
const action = {
  type: 'action',
  id: 'step-0001-action-g0',
  timestamp: '2026-07-20T10:15:02.000000',
  action_name: 'left_click',
  content: { action: 'left_click', arguments: { coordinate: [500, 340], thoughts: 'Open the hours page.' } },
  action_nl_description: 'Open the hours page. left_click(coordinate=[500, 340])',
  agent_state: { agent: 'fara', tools_available: ['computer_use'], plan: [{ step: 'open' }], facts: ['x'] },
  llm_conversation: {
    messages: [
      {
        raw_response: 'Open the hours page.\n<tool_call>{}</tool_call>',
        reasoning: '',
        finish_reason: 'stop',
        usage: { prompt_tokens: 1200, completion_tokens: 40, reasoning_tokens: 0 },
      },
    ],
  },
  grounding: null,
};

describe('event schema', () => {
  it.each([
    ['environment observation', environment],
    ['tool output', toolOutput],
    ['user message: task', userMessage('task')],
    ['user message: followup_task', userMessage('followup_task')],
    ['user message: critical_point_response', userMessage('critical_point_response')],
    ['user message: retry_feedback', userMessage('retry_feedback')],
    ['action', action],
    ['action with grounding', { ...action, grounding: { messages: [] } }],
  ])('round-trips a complete %s unchanged', (_name, literal) => {
    const parsed = EventSchema.parse(literal);
    expect(JSON.parse(JSON.stringify(parsed))).toEqual(literal);
  });

  it('keeps unknown fields (the original writes tool_sub_calls)', () => {
    const parsed = EventSchema.parse({ ...action, tool_sub_calls: [{ name: 'read_page' }] });
    expect(parsed).toHaveProperty('tool_sub_calls', [{ name: 'read_page' }]);
  });

  it('fills the defaults the original reader fills', () => {
    const parsed = EventSchema.parse({ type: 'observation', observation_type: 'tool_output', id: 'x', timestamp: 't' });
    expect(parsed).toEqual({ ...toolOutput, id: 'x', timestamp: 't', action_id: null, output: '', error: '' });
  });

  it.each([
    ['an unknown observation_type', { ...environment, observation_type: 'audio' }],
    ['an unknown message_type', userMessage('chitchat')],
    ['an unknown type', { ...action, type: 'thought' }],
    ['a missing id', { ...environment, id: undefined }],
    ['a missing timestamp', { ...toolOutput, timestamp: undefined }],
    ['a null error (the original wants a string)', { ...toolOutput, error: null }],
    ['an action without content', { ...action, content: undefined }],
    ['an action content without its action name', { ...action, content: { arguments: {} } }],
    ['a user message without content', { ...userMessage('task'), content: undefined }],
  ])('rejects %s', (_name, literal) => {
    expect(EventSchema.safeParse(literal).success).toBe(false);
  });
});

describe('task, verification, status and data point schemas', () => {
  it('requires task_id and instruction and fills the rest', () => {
    expect(TaskSchema.parse({ task_id: 't1', instruction: 'do it' })).toEqual({
      task_id: 't1',
      instruction: 'do it',
      images: [],
      environment_config: {},
      solver: { hints: null },
      verifier: { hints: null, config: [] },
      metadata: {},
    });
    expect(TaskSchema.safeParse({ instruction: 'do it' }).success).toBe(false);
    expect(TaskSchema.safeParse({ task_id: 't1' }).success).toBe(false);
  });

  it('accepts the richer verifiers and keeps their fields', () => {
    const literal = {
      result_type: 'mm_rubric',
      score: 0.75,
      reasoning: 'most points met',
      verifier_name: 'rubric',
      metadata: {},
      total_max_points: 4,
    };
    expect(VerificationResultSchema.parse(literal)).toEqual(literal);
    expect(VerificationResultSchema.safeParse({ ...literal, result_type: 'vibes' }).success).toBe(false);
    expect(VerificationResultSchema.safeParse({ score: 1 }).success).toBe(false);
  });

  it.each(['running', 'complete', 'aborted', 'waiting_for_user', 'max_rounds', 'timed_out'])(
    'accepts status %s',
    (status) => {
      expect(StatusFileSchema.parse({ status, outcome: null }).status).toBe(status);
    },
  );

  it('rejects statuses the original reader does not know', () => {
    expect(StatusFileSchema.safeParse({ status: 'cancelled', outcome: null }).success).toBe(false);
  });

  it('round-trips a data point', () => {
    const literal = {
      task: TaskSchema.parse({ task_id: 't1', instruction: 'do it' }),
      solver_log: { events: [environment, action, toolOutput], status: 'complete', outcome: { answer: '42' } },
      verification: {
        exact: { result_type: 'base', score: 1, reasoning: null, verifier_name: 'exact', metadata: {} },
      },
      metadata: { stats: { end_reason: 'complete' }, run_id: 'r1', created_at: '2026-07-20T10:15:00Z' },
    };
    expect(JSON.parse(JSON.stringify(DataPointSchema.parse(literal)))).toEqual(literal);
  });
});

describe('statuses', () => {
  it.each<[TaskState, string]>([
    ['running', 'running'],
    ['complete', 'complete'],
    ['waiting_for_user', 'waiting_for_user'],
    ['max_rounds', 'max_rounds'],
    ['failed', 'aborted'],
    ['cancelled', 'aborted'],
  ])('%s is written as %s and read back exactly', (status, file) => {
    expect(toFileStatus(status)).toBe(file);
    expect(fromFileStatus(toFileStatus(status), status)).toBe(status);
  });

  it('reads a foreign aborted as failed, and ignores a run_status that disagrees with the file', () => {
    expect(fromFileStatus('aborted')).toBe('failed');
    expect(fromFileStatus('complete', 'cancelled')).toBe('complete');
  });

  it('reads the Fara-1.5 timed_out (never written by us) as failed, ending timed_out', () => {
    expect(fromFileStatus('timed_out')).toBe('failed');
    expect(fromFileStatus('timed_out', 'failed')).toBe('failed');
    expect(fileEndReason('timed_out')).toBe('timed_out');
    expect(TASK_STATES.map(toFileStatus)).not.toContain('timed_out');
  });

  it.each(['running', 'complete', 'aborted', 'waiting_for_user', 'max_rounds'] as const)(
    'a file status %s implies no end reason by itself',
    (status) => expect(fileEndReason(status)).toBeUndefined(),
  );
});

describe('event ids', () => {
  it.each([
    [{ step: 7, kind: 'pre' as const }, 'step-0007-pre-g0'],
    [{ step: 7, kind: 'action' as const, generation: 0 }, 'step-0007-action-g0'],
    [{ step: 7, kind: 'post' as const }, 'step-0007-post-g0'],
    [{ step: 7, kind: 'tool' as const }, 'step-0007-tool-g0'],
    [{ step: 7, kind: 'pre' as const, generation: 1 }, 'step-0007-pre-g1'],
    [{ step: 7, kind: 'restored' as const, generation: 1 }, 'step-0007-restored-g1'],
    [{ step: 7, kind: 'feedback' as const }, 'step-0007-feedback-g0'],
    [{ step: 0, kind: 'task' as const }, 'user-0000-task-g0'],
    [{ step: 3, kind: 'reply' as const }, 'user-0003-reply-g0'],
    [{ step: 12, kind: 'followup' as const }, 'user-0012-followup-g0'],
    [{ step: 12345, kind: 'pre' as const }, 'step-12345-pre-g0'],
  ])('%j → %s, and parses back', (parts, id) => {
    expect(eventId(parts)).toBe(id);
    expect(parseEventId(id)).toEqual({ generation: 0, ...parts });
  });

  it.each(['0a1b', 'step-0001-nope-g0', 'user-0001-pre-g0', 'step-1-pre-g0'])('%s is not one of ours', (id) => {
    expect(parseEventId(id)).toBeUndefined();
  });

  it.each([-1, 1.5, NaN])('rejects step %s', (step) => {
    expect(() => eventId({ step, kind: 'pre' })).toThrow(RangeError);
  });
});

describe('screenshot names', () => {
  it.each([
    [0, 'pre' as const, 0, 'screenshot_0_pre.png'],
    [7, 'post' as const, 0, 'screenshot_7_post.png'],
    [7, 'pre' as const, 2, 'screenshot_7_g2_pre.png'],
    [7, 'post' as const, 2, 'screenshot_7_g2_post.png'],
  ])('step %s %s generation %s → %s', (step, phase, generation, name) => {
    expect(screenshotName(step, phase, generation)).toBe(name);
  });

  it.each([0, 1, 2, 10, 123])('end in _pre.png / _post.png in generation %s', (generation) => {
    for (const step of [0, 1, 7, 12345]) {
      const pre = screenshotName(step, 'pre', generation);
      const post = screenshotName(step, 'post', generation);
      expect(pre).toMatch(/_pre\.png$/);
      expect(post).toMatch(/_post\.png$/);
      // The original's verifier finds a step's pre image this way.
      expect(post.replace('_post.', '_pre.')).toBe(pre);
    }
  });

  it.each([
    [-1, 0],
    [1.5, 0],
    [1, -1],
    [1, 0.5],
  ])('rejects step %s generation %s', (step, generation) => {
    expect(() => screenshotName(step, 'pre', generation)).toThrow(RangeError);
  });
});
