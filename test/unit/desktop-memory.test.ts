// Specification of the desktop agent's memory: the action model's chat rebuilt from recorded events.
import { describe, expect, it } from 'vitest';

import { DEFAULT_MEMORY_TOKEN_BUDGET, desktopMessages, memoryLines } from '../../src/desktop/agent';
import {
  actionEvent,
  postObservation,
  preObservation,
  retryFeedback,
  sessionRestored,
  taskMessage,
  toolOutput,
  userReply,
} from '../../src/trajectory/events';
import type { Event } from '../../src/trajectory/schema';

const OBJECTIVE = 'Save notes.txt';

interface CallSpec {
  name: string;
  args?: Record<string, unknown>;
  output?: string;
  error?: string;
}

/** The events of one step as the desktop loop records them (see memory.ts and the brief's contract). */
function stepEvents(step: number, description: string, thoughts: string, calls: CallSpec[]): Event[] {
  const events: Event[] = [preObservation(step, { screenshot_path: `screenshot_${step}_pre.png` })];
  calls.forEach((call, k) => {
    const first = k === 0;
    const args = { ...(call.args ?? {}), ...(first && thoughts !== '' ? { thoughts } : {}) };
    const action = {
      ...actionEvent(
        step,
        { action_name: call.name, content: { action: call.name, arguments: args } },
        first
          ? { metadata: { screen_description: description, tool_calls: calls.map((c) => ({ name: c.name })) } }
          : {},
      ),
      id: `step-${step}-action-${k}`,
    };
    events.push(action, {
      ...toolOutput(step, action.id, { output: call.output ?? '', error: call.error }),
      id: `t${step}-${k}`,
    });
  });
  events.push(postObservation(step, `step-${step}-action-0`, {}));
  return events;
}

const base = (description = 'The screen now.') => ({ system: 'SYS', objective: OBJECTIVE, description });

describe('memoryLines: one line per entry, in order', () => {
  it.each<[string, Event[], string[]]>([
    ['only the task', [taskMessage(OBJECTIVE)], [`OBJECTIVE: ${OBJECTIVE}`]],
    [
      'a step with two calls',
      [
        taskMessage(OBJECTIVE),
        ...stepEvents(1, 'An editor is open.', 'I save with the keyboard.', [
          { name: 'send_key', args: { key: 'ctrl+s' }, output: 'Pressed ctrl+s.' },
          { name: 'run_command', args: { command: 'ls' }, output: 'notes.txt' },
        ]),
      ],
      [
        `OBJECTIVE: ${OBJECTIVE}`,
        'THOUGHT: An editor is open.',
        'THOUGHT: I save with the keyboard.',
        'ACTION: {"name":"send_key","arguments":{"key":"ctrl+s"}}',
        'OBSERVATION: Pressed ctrl+s.',
        'ACTION: {"name":"run_command","arguments":{"command":"ls"}}',
        'OBSERVATION: notes.txt',
      ],
    ],
    [
      'a reply without text, an error observation',
      [...stepEvents(1, 'Desktop.', '', [{ name: 'click', args: { query: 'OK' }, error: 'no point found' }])],
      [
        `OBJECTIVE: ${OBJECTIVE}`,
        'THOUGHT: Desktop.',
        'ACTION: {"name":"click","arguments":{"query":"OK"}}',
        'OBSERVATION: Error executing function: no point found',
      ],
    ],
    [
      'an error with output',
      [
        ...stepEvents(1, 'D.', '', [
          { name: 'run_command', args: { command: 'false' }, output: 'partial', error: 'exit 1' },
        ]),
      ],
      [
        `OBJECTIVE: ${OBJECTIVE}`,
        'THOUGHT: D.',
        'ACTION: {"name":"run_command","arguments":{"command":"false"}}',
        'OBSERVATION: Error executing function: exit 1\npartial',
      ],
    ],
    [
      'a user reply and a restored sandbox',
      [
        taskMessage(OBJECTIVE),
        ...stepEvents(1, 'D1.', 'Which folder?', [
          { name: 'ask_user', args: { question: 'Which folder?' }, output: '' },
        ]),
        userReply(1, 'The Documents folder.'),
        sessionRestored(2, 'A new sandbox was started; files outside /home were lost.'),
        ...stepEvents(2, 'D2.', '', [{ name: 'stop', args: { answer: 'Saved.' } }]),
      ],
      [
        `OBJECTIVE: ${OBJECTIVE}`,
        'THOUGHT: D1.',
        'THOUGHT: Which folder?',
        'ACTION: {"name":"ask_user","arguments":{"question":"Which folder?"}}',
        'OBSERVATION: ',
        'USER: The Documents folder.',
        'NOTE: A new sandbox was started; files outside /home were lost.',
        'THOUGHT: D2.',
        'ACTION: {"name":"stop","arguments":{"answer":"Saved."}}',
        'OBSERVATION: ',
      ],
    ],
    [
      'feedback on an output that called no tool',
      [
        preObservation(1, {}),
        retryFeedback(1, 'Your output did not call any tool.'),
        ...stepEvents(1, 'D.', '', [{ name: 'stop' }]),
      ],
      [
        `OBJECTIVE: ${OBJECTIVE}`,
        'NOTE: Your output did not call any tool.',
        'THOUGHT: D.',
        'ACTION: {"name":"stop","arguments":{}}',
        'OBSERVATION: ',
      ],
    ],
    [
      'an output that called no tool, recorded as invalid_reply: thoughts and the error, no ACTION',
      [
        ...stepEvents(1, 'D.', 'I think it is done.', [
          { name: 'invalid_reply', error: 'Your output did not call any tool.' },
        ]),
      ],
      [
        `OBJECTIVE: ${OBJECTIVE}`,
        'THOUGHT: D.',
        'THOUGHT: I think it is done.',
        'OBSERVATION: Error: Your output did not call any tool.',
      ],
    ],
    [
      'the current step, observed but not decided, adds nothing',
      [taskMessage(OBJECTIVE), preObservation(1, { screenshot_path: 'screenshot_1_pre.png' })],
      [`OBJECTIVE: ${OBJECTIVE}`],
    ],
  ])('%s', (_case, events, expected) => {
    expect(memoryLines(events, { objective: OBJECTIVE })).toEqual(expected);
  });

  it('cuts a long observation to head and tail', () => {
    const output = `HEAD${'x'.repeat(10_000)}TAIL`;
    const lines = memoryLines(
      stepEvents(1, 'D.', '', [{ name: 'run_command', args: { command: 'cat big' }, output }]),
      {
        objective: OBJECTIVE,
      },
    );
    const observation = lines.find((l) => l.startsWith('OBSERVATION: ')) ?? '';
    expect(observation.length).toBeLessThan(4100);
    expect(observation).toMatch(/^OBSERVATION: HEAD/);
    expect(observation).toMatch(/TAIL$/);
    expect(observation).toContain('[truncated 6008 chars]');
  });
});

describe('memoryLines: the token budget', () => {
  /** Step i: a description of ~`size` characters and one call. */
  const steps = (n: number, size = 400) =>
    Array.from({ length: n }, (_, i) =>
      stepEvents(i + 1, `Screen ${i + 1} ${'.'.repeat(size)}`, '', [
        { name: 'send_key', args: { key: 'a' }, output: `ok ${i + 1}` },
      ]),
    ).flat();

  it.each<[string, number, number, number]>([
    // [case, steps, budget, expected omitted]
    ['everything fits', 5, 24_000, 0],
    ['a small budget keeps the newest steps', 20, 1_000, 12],
    ['a tiny budget still keeps the newest step', 20, 10, 19],
  ])('%s', (_case, n, budget, omitted) => {
    const lines = memoryLines(steps(n), { objective: OBJECTIVE, tokenBudget: budget });
    expect(lines[0]).toBe(`OBJECTIVE: ${OBJECTIVE}`);
    if (omitted === 0) expect(lines.some((l) => l.includes('omitted'))).toBe(false);
    else expect(lines[1]).toBe(`[${omitted} earlier steps omitted]`);
    const kept = lines.filter((l) => l.startsWith('OBSERVATION: ')).map((l) => l.slice('OBSERVATION: '.length));
    expect(kept).toEqual(Array.from({ length: n - omitted }, (_, i) => `ok ${omitted + i + 1}`));
  });

  it('keeps whole steps: every kept ACTION has its THOUGHT and OBSERVATION', () => {
    const lines = memoryLines(steps(30), { objective: OBJECTIVE, tokenBudget: 2_000 });
    const body = lines.slice(2);
    expect(body.length % 3).toBe(0);
    for (let i = 0; i < body.length; i += 3) {
      expect(body[i]).toMatch(/^THOUGHT: /);
      expect(body[i + 1]).toMatch(/^ACTION: /);
      expect(body[i + 2]).toMatch(/^OBSERVATION: /);
    }
  });

  it('keeps user replies and restore notes of omitted steps, after the marker', () => {
    const events = [
      ...steps(3),
      userReply(3, 'Use the Documents folder.'),
      sessionRestored(4, 'A new sandbox was started.'),
      ...steps(10).map((e) => ({ ...e, id: `late-${e.id}` })),
    ];
    const lines = memoryLines(events, { objective: OBJECTIVE, tokenBudget: 800 });
    expect(lines.slice(0, 4)).toEqual([
      `OBJECTIVE: ${OBJECTIVE}`,
      expect.stringMatching(/^\[\d+ earlier steps omitted\]$/),
      'USER: Use the Documents folder.',
      'NOTE: A new sandbox was started.',
    ]);
  });

  it('the default budget is 24000 tokens', () => {
    expect(DEFAULT_MEMORY_TOKEN_BUDGET).toBe(24_000);
    const lines = memoryLines(steps(200), { objective: OBJECTIVE });
    expect(lines.join('\n').length / 4).toBeLessThanOrEqual(24_000);
    expect(lines[1]).toMatch(/earlier steps omitted/);
  });
});

describe('desktopMessages', () => {
  it('system, the memory in one user message, then the current screen and "What next?"', () => {
    const events = [
      taskMessage(OBJECTIVE),
      ...stepEvents(1, 'D1.', 'Saving.', [{ name: 'send_key', args: { key: 'ctrl+s' }, output: 'ok' }]),
    ];
    const messages = desktopMessages(events, base('A dialog asks where to save.'));
    expect(messages).toEqual([
      { role: 'system', content: 'SYS' },
      {
        role: 'user',
        content: [
          `OBJECTIVE: ${OBJECTIVE}`,
          'THOUGHT: D1.',
          'THOUGHT: Saving.',
          'ACTION: {"name":"send_key","arguments":{"key":"ctrl+s"}}',
          'OBSERVATION: ok',
        ].join('\n'),
      },
      { role: 'user', content: 'CURRENT SCREEN:\nA dialog asks where to save.\n\nWhat next?' },
    ]);
  });

  it('counts the system prompt and the current screen against the budget', () => {
    const events = Array.from({ length: 10 }, (_, i) =>
      stepEvents(i + 1, 'D'.repeat(400), '', [{ name: 'send_key', args: { key: 'a' }, output: 'ok' }]),
    ).flat();
    const small = desktopMessages(events, { ...base(), tokenBudget: 2_000 });
    const crowded = desktopMessages(events, { ...base(), system: 'S'.repeat(4_000), tokenBudget: 2_000 });
    const count = (m: typeof small) =>
      String(m[1]?.content)
        .split('\n')
        .filter((l) => l.startsWith('ACTION')).length;
    expect(count(crowded)).toBeLessThan(count(small));
  });
});
