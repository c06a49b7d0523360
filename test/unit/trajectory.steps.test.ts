// Specification of step reconstruction from the flat event stream, and of the flat per-step rows.
import { describe, expect, it } from 'vitest';

import { ConsecutiveActionsError, UnknownActionIdError } from '../../src/trajectory/errors';
import {
  actionEvent,
  postObservation,
  preObservation,
  sessionRestored,
  taskMessage,
  toolOutput,
  userReply,
} from '../../src/trajectory/events';
import type { Event } from '../../src/trajectory/schema';
import { buildSteps, stepScreenshot, stepSummaries } from '../../src/trajectory/steps';

const T = { timestamp: '2026-07-20T10:00:00Z' };
const act = (step: number, name = 'left_click', thoughts = '') =>
  actionEvent(
    step,
    { action_name: name, content: { action: name, arguments: { thoughts } }, action_nl_description: `${name}()` },
    T,
  );
const aid = (step: number) => `step-${String(step).padStart(4, '0')}-action-g0`;
const ids = (events: readonly { id: string }[]) => events.map((e) => e.id);

describe('buildSteps', () => {
  it('groups pre observations, the action and its post observations', () => {
    const events: Event[] = [
      taskMessage('go', T),
      preObservation(1, { screenshot_path: 'screenshot_1_pre.png' }, T),
      act(1),
      toolOutput(1, aid(1), { output: 'clicked' }, T),
      postObservation(1, aid(1), { screenshot_path: 'screenshot_1_post.png' }, T),
      preObservation(2, {}, T),
      act(2),
    ];
    const steps = buildSteps(events);
    expect(steps).toHaveLength(2);
    expect(ids(steps[0]!.pre)).toEqual(['user-0000-task-g0', 'step-0001-pre-g0']);
    expect(steps[0]!.action?.id).toBe(aid(1));
    expect(ids(steps[0]!.post)).toEqual(['step-0001-tool-g0', 'step-0001-post-g0']);
    expect(ids(steps[1]!.pre)).toEqual(['step-0002-pre-g0']);
    expect(steps[1]!.post).toEqual([]);
  });

  it('keeps trailing observations as a step without action, unless asked not to', () => {
    const events: Event[] = [preObservation(1, {}, T), act(1), userReply(1, 'from SF', T)];
    expect(buildSteps(events).map((s) => s.action?.id ?? null)).toEqual([aid(1), null]);
    expect(buildSteps(events, { withTail: false })).toHaveLength(1);
  });

  it('attaches a late observation both to its own step and to the step it arrived in', () => {
    const late = toolOutput(1, aid(1), { output: 'download finished' }, T);
    const events: Event[] = [
      preObservation(1, {}, T),
      act(1),
      preObservation(2, {}, T),
      act(2),
      late, // arrives in step 3's window, after action 2
      preObservation(3, {}, T),
      act(3),
    ];
    const steps = buildSteps(events);
    expect(ids(steps[0]!.post)).toEqual([late.id]);
    expect(ids(steps[0]!.latePost)).toEqual([late.id]);
    expect(ids(steps[2]!.lateArrivals)).toEqual([late.id]);
    expect(steps[1]!.lateArrivals).toEqual([]);
  });

  it('an observation right after its action is not late', () => {
    const steps = buildSteps([preObservation(1, {}, T), act(1), toolOutput(1, aid(1), { output: 'ok' }, T)]);
    expect(steps[0]!.latePost).toEqual([]);
  });

  it('an observation naming no action is UnknownActionIdError', () => {
    const events: Event[] = [preObservation(1, {}, T), act(1), toolOutput(1, 'nope', { output: 'x' }, T)];
    expect(() => buildSteps(events)).toThrow(UnknownActionIdError);
    expect(() => buildSteps(events)).toThrow(/step-0001-tool-g0 refers to action_id nope/);
  });

  it('two actions with no observation between them is ConsecutiveActionsError', () => {
    expect(() => buildSteps([preObservation(1, {}, T), act(1), act(2)])).toThrow(ConsecutiveActionsError);
  });

  it('a crashed step re-observed in a new generation keeps the stream alternating', () => {
    const events: Event[] = [
      preObservation(7, {}, T),
      act(7),
      sessionRestored(7, 'session restored at http://127.0.0.1/', { ...T, generation: 1 }),
      preObservation(7, {}, { ...T, generation: 1 }),
      actionEvent(7, { action_name: 'wait', content: { action: 'wait' } }, { ...T, generation: 1 }),
    ];
    const steps = buildSteps(events);
    expect(ids(steps[1]!.pre)).toEqual(['step-0007-restored-g1', 'step-0007-pre-g1']);
    expect(steps[1]!.action?.id).toBe('step-0007-action-g1');
  });
});

describe('stepScreenshot', () => {
  it.each([
    [
      'the first post environment observation with a screenshot',
      [
        postObservation(1, aid(1), { url: 'u' }, T),
        postObservation(1, aid(1), { screenshot_path: 'screenshot_1_post.png' }, { ...T, generation: 1 }),
        preObservation(2, { screenshot_path: 'screenshot_2_pre.png' }, T),
      ],
      'screenshot_1_post.png',
    ],
    [
      "else the next step's pre observation",
      [toolOutput(1, aid(1), { output: 'x' }, T), preObservation(2, { screenshot_path: 'screenshot_2_pre.png' }, T)],
      'screenshot_2_pre.png',
    ],
    ['else nothing', [toolOutput(1, aid(1), { output: 'x' }, T)], ''],
  ])('%s', (_name, after, expected) => {
    const steps = buildSteps([preObservation(1, { screenshot_path: 'screenshot_1_pre.png' }, T), act(1), ...after]);
    expect(stepScreenshot(steps, 0)).toBe(expected);
  });
});

describe('stepSummaries', () => {
  it('gives one row per action with url, screenshot, text observation and the user messages before it', () => {
    const events: Event[] = [
      taskMessage('book a ticket', T),
      preObservation(1, { url: 'http://a/', screenshot_path: 'screenshot_1_pre.png' }, T),
      act(1, 'ask_user_question', 'Need the origin.'),
      toolOutput(1, aid(1), { output: 'asked', error: '' }, T),
      postObservation(1, aid(1), { url: 'http://a/', screenshot_path: 'screenshot_1_post.png' }, T),
      userReply(1, 'from San Francisco', T),
      preObservation(2, { url: 'http://b/', screenshot_path: 'screenshot_2_pre.png' }, T),
      act(2, 'left_click'),
      toolOutput(2, aid(2), { output: '', error: 'element not found' }, T),
    ];
    expect(stepSummaries(events)).toEqual([
      {
        step: 1,
        action_name: 'ask_user_question',
        description: 'ask_user_question()',
        thoughts: 'Need the origin.',
        url: 'http://a/',
        screenshot: 'screenshot_1_post.png',
        text_observation: 'asked',
        user_messages: [{ message_type: 'task', content: 'book a ticket' }],
      },
      {
        step: 2,
        action_name: 'left_click',
        description: 'left_click()',
        thoughts: '',
        url: 'http://b/',
        screenshot: '',
        text_observation: 'error: element not found',
        user_messages: [{ message_type: 'critical_point_response', content: 'from San Francisco' }],
      },
    ]);
  });
});
