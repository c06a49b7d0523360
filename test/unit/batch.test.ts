// A model call's batch across steps (src/agent/batch.ts): which action a step takes from the call before it, when a
// batch ends early, how a provider's check waits for the person's yes, and how the history marks the steps that made
// no call of their own.
import { describe, expect, it } from 'vitest';

import { batchMetadata, batchStep, confirmsCheck, continuedMetadata } from '../../src/agent/batch';
import { historyForStep } from '../../src/agent/history';
import type { AgentAction } from '../../src/actions/schemas';
import {
  actionEvent,
  followupMessage,
  preObservation,
  taskMessage,
  toolOutput,
  userReply,
} from '../../src/trajectory/events';
import { eventId } from '../../src/trajectory/ids';
import type { Event } from '../../src/trajectory/schema';

const T = { timestamp: '2026-12-06T08:00:00Z' };
const ZERO = { prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0 };
const click = (x: number): AgentAction => ({ action: 'left_click', thoughts: '', coordinate: [x, 10] });
const typed: AgentAction = { action: 'type', thoughts: '', text: 'Lisbon' };
const aid = (step: number, g = 0) => eventId({ step, kind: 'action', generation: g });

function pre(step: number, g = 0): Event {
  return preObservation(
    step,
    { screenshot_path: `screenshot_${step}_pre.png`, url: 'https://t.test/' },
    { ...T, generation: g },
  );
}

function act(step: number, action: AgentAction, metadata: Record<string, unknown>, g = 0): Event {
  return actionEvent(
    step,
    {
      action_name: action.action,
      content: { action: action.action, arguments: { ...action } },
      llm_conversation: {
        messages:
          metadata.batch && (metadata.batch as { continues?: true }).continues
            ? []
            : [{ raw_response: `{"call":${step}}`, reasoning: '', finish_reason: '', usage: ZERO }],
      },
    },
    { ...T, generation: g, metadata },
  );
}

const tool = (step: number, error = '', g = 0) =>
  toolOutput(step, aid(step, g), { output: 'done', error }, { ...T, generation: g });

describe('a batch across steps', () => {
  const first = batchMetadata({
    native: { type: 'click' },
    then: [{ action: typed, native: { type: 'type' } }, { action: click(7) }],
  });

  it('records the rest of the call on the first step, and nothing for a call of one action', () => {
    expect(first).toMatchObject({
      native_action: { type: 'click' },
      batch: { pending: [{ action: typed }, { action: click(7) }] },
    });
    expect(batchMetadata({})).toEqual({});
    expect(batchMetadata({ native: { type: 'wait' } })).toEqual({ native_action: { type: 'wait' } });
  });

  it('gives the next step the next action, without a call, and the step after it the last one', () => {
    const events = [taskMessage('Book', T), pre(1), act(1, click(1), first), tool(1), pre(2)];
    const two = batchStep(events, 2, 0);
    expect(two).toEqual({
      next: { action: typed, native: { type: 'type' } },
      rest: [{ action: click(7) }],
      confirmed: false,
    });
    const after = [...events, act(2, typed, continuedMetadata(two!.next, two!.rest, false)), tool(2), pre(3)];
    expect(batchStep(after, 3, 0)).toEqual({ next: { action: click(7) }, rest: [], confirmed: false });
    const done = [...after, act(3, click(7), continuedMetadata({ action: click(7) }, [], false)), tool(3), pre(4)];
    expect(batchStep(done, 4, 0)).toBeNull();
    // The history marks the steps that made no call: the family answers the call after its last action.
    const history = historyForStep(done, 4, 0).filter((e) => e.kind === 'assistant');
    expect(history).toEqual([
      { kind: 'assistant', text: '{"call":1}' },
      { kind: 'assistant', text: '', continues: true },
      { kind: 'assistant', text: '', continues: true },
    ]);
  });

  it('ends early when the action failed, the session was restored, or the person said something', () => {
    const base = [taskMessage('Book', T), pre(1), act(1, click(1), first)];
    expect(batchStep([...base, tool(1, 'no element there'), pre(2)], 2, 0)).toBeNull();
    expect(batchStep([...base, tool(1), pre(2, 1)], 2, 1)).toBeNull();
    expect(batchStep([...base, tool(1), followupMessage(2, 'Use Porto instead', T), pre(2)], 2, 0)).toBeNull();
  });
});

describe("a provider's check", () => {
  const ask: AgentAction = { action: 'ask_user_question', thoughts: '', question: 'Confirm the purchase?' };
  const held = batchMetadata({
    then: [{ action: click(3) }, { action: typed }],
    check: { message: 'Confirm the purchase?', native: { id: 'cs_1' } },
  });
  const asked = [taskMessage('Buy', T), pre(1), act(1, ask, held), tool(1)];

  it('carries the held actions out after a yes, and marks them confirmed', () => {
    const events = [...asked, userReply(1, 'Yes, go ahead', T), pre(2)];
    expect(batchStep(events, 2, 0)).toEqual({ next: { action: click(3) }, rest: [{ action: typed }], confirmed: true });
    expect(continuedMetadata({ action: click(3) }, [{ action: typed }], true)).toMatchObject({
      batch: { confirmed: true, continues: true },
    });
  });

  it('leaves them undone after a no, an unclear reply, or none', () => {
    for (const reply of ['No', 'not now', 'What does it cost?', 'yes but do not pay', '']) {
      const events = [...asked, ...(reply ? [userReply(1, reply, T)] : []), pre(2)];
      expect(batchStep(events, 2, 0), reply).toBeNull();
    }
  });

  it('reads a confirmation only from a reply that starts with a yes and says no no', () => {
    expect(['yes', 'Y', 'OK.', 'Sure, proceed', 'confirmed', 'Go ahead please', 'approve']).toSatisfy((r: string[]) =>
      r.every(confirmsCheck),
    );
    expect(['no', 'nope', 'yes, but do not submit', 'maybe', 'Please continue on your own', 'okay no']).toSatisfy(
      (r: string[]) => r.every((x) => !confirmsCheck(x)),
    );
  });
});
