// A model family from a test: a few lines registered at runtime (no project file edited) whose model answers with
// a line, `click X Y` or `done ANSWER`, instead of Fara's <tool_call>. A task naming it runs on the real dev server
// through an in-process worker against the scripted model: its request, its reading of outputs, its feedback for an
// output that is none, and its ending all come from the family, and the run folder records them.
import { describe, expect, it } from 'vitest';
import { fara15ActionSchema } from '../../src/actions/schemas';
import type { AgentAction } from '../../src/actions/schemas';
import { registerFamily } from '../../src/families/registry';
import type { ModelFamily } from '../../src/families/family';
import { ModelOutputError } from '../../src/model/errors';
import type { ChatMessage } from '../../src/model/client';
import { readRun } from '../../src/trajectory/reader';
import type { TaskResult } from '../../src/contract/task';
import { useHarness } from './use-harness';
import type { Harness } from './harness';

const RULE = 'Answer with one line: "click X Y" (X and Y from 0 to 1000) or "done ANSWER".';

const lines: ModelFamily = {
  name: 'test-lines',
  actionSchema: fara15ActionSchema,
  allowedActions: ['left_click', 'terminate'],
  coordinateSpace: 'norm1000',
  resizeFactor: 32,
  displaySize: () => ({ width: 1000, height: 1000 }),
  async request({ history }) {
    const said = history.map((t): ChatMessage =>
      t.kind === 'assistant'
        ? { role: 'assistant', content: t.text }
        : {
            role: 'user',
            content: [
              { type: 'text', text: 'textObservation' in t && t.textObservation ? t.textObservation : 'next?' },
            ],
          },
    );
    return { messages: [{ role: 'system', content: RULE }, ...said], allowed: this.allowedActions };
  },
  outputText: (output) => output.text,
  read(output) {
    const click = /^click (\d+) (\d+)$/.exec(output.text.trim());
    const done = /^done (.+)$/.exec(output.text.trim());
    const action: AgentAction | undefined = click
      ? { action: 'left_click', coordinate: [Number(click[1]), Number(click[2])] }
      : done
        ? { action: 'terminate', answer: done[1] ?? '' }
        : undefined;
    if (!action) throw new ModelOutputError(`"${output.text}" is no line of the test family`);
    return { thoughts: '', action, toolCallText: output.text };
  },
  feedback: (error) => `${error.message}. ${RULE}`,
  outcome: (a) =>
    a.action === 'terminate'
      ? { kind: 'terminate', text: 'answer' in a ? a.answer : a.status }
      : { kind: 'act', text: null },
  identityIssue: () => 'the test family has no identities',
  promptFileActions: () => Promise.reject(new Error('the test family takes no prompt file')),
};

let h: Harness;
registerFamily(lines);
useHarness((harness) => (h = harness));

describe('a model family registered at runtime', () => {
  it('runs a task with its own output format to the end, its feedback read by the model', async () => {
    const handle = await h.start({ script: 'family-lines', profile: 'test-lines', maxSteps: 5 });
    expect((await handle.result()) as TaskResult).toMatchObject({
      status: 'complete',
      answer: 'clicked the search box',
    });

    const requests = h.model.requests.filter((r) => r.script === 'family-lines' && !r.subcall);
    expect(requests.map((r) => r.index)).toEqual([0, 1, 2]);
    expect(requests.every((r) => r.allText.startsWith(RULE))).toBe(true);
    expect(requests[1]?.lastUserText).toBe(`"let me think" is no line of the test family. ${RULE}`);

    const run = await readRun(h.runDir(handle.workflowId));
    const actions = run.events.filter((e) => e.type === 'action');
    expect(actions.map((e) => e.action_name)).toEqual(['invalid_reply', 'left_click', 'terminate']);
    expect(actions[1]?.content.arguments).toMatchObject({ coordinate: [500, 200] });
    expect(actions[2]?.content.arguments).toMatchObject({ answer: 'clicked the search box' });
    // The click was carried out in the family's coordinate space (1000x1000 over the 1440x900 viewport): the search box.
    const clicked = run.events.find((e) => e.type === 'observation' && e.action_id === actions[1]?.id);
    expect(clicked).toMatchObject({
      observation_type: 'tool_output',
      output: 'I clicked at coordinates (720.0, 180.0).',
      error: '',
      metadata: { element: { selector: '#q' } },
    });
    expect(actions.map((e) => e.agent_state?.agent)).toEqual(Array(3).fill('durable-cua/test-lines'));
    expect(run.task.metadata).toMatchObject({ profile: 'test-lines' });
  }, 120_000);

  it('refuses a family no process registered, naming the known ones, before the task starts', async () => {
    await expect(h.start({ script: 'family-lines', profile: 'no-such-family' })).rejects.toThrow(
      "invalid task: profile: unknown model family 'no-such-family' (known: fara-1.5, fara-7b, openai-computer, anthropic-computer, gemini-computer, ui-tars-1.5, qwen-vl, test-lines)",
    );
  });
});
