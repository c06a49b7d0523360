// The MCP tools over a stand-in of the typed client (the SDK's Client on an in-memory transport): who may answer which
// question, the state a task is shown in (links, next step), when a wait ends, and refusals as one-line tool errors.
import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TaskNotFoundError } from '../../client/client';
import type { AgentClient, PendingQuestion, TaskSnapshot } from '../../client/client';
import { connect, snapshot } from './mcp.fixtures';

/** A stand-in client: `states` are returned by status() one after another (the last one repeats). */
function fakeAgent(states: TaskSnapshot[]) {
  const replies: { id: string; text: string; questionId?: string }[] = [];
  let i = 0;
  const agent = {
    status: async (id: string) => {
      if (id === 'missing') throw new TaskNotFoundError(id);
      return states[Math.min(i++, states.length - 1)]!;
    },
    reply: async (id: string, text: string, opts: { questionId?: string } = {}) => {
      replies.push({ id, text, ...opts });
      return { step: 3 };
    },
  };
  return { agent: agent as unknown as AgentClient, replies };
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (r: CallToolResult) => (r.content[0]?.type === 'text' ? r.content[0].text : '');
const data = (r: CallToolResult) => r.structuredContent as Record<string, unknown>;

const question = (kind: PendingQuestion['kind']): PendingQuestion => ({ id: 'q-1', text: 'Go on?', step: 3, kind });
const waiting = (kind: PendingQuestion['kind']) =>
  snapshot('t-1', { status: 'waiting_for_user', question: question(kind) });

describe('reply_to_task', () => {
  it.each(['approval', 'provider_check'] as const)(
    'refuses a question of kind %s unless callers may approve',
    async (kind) => {
      const refused = fakeAgent([waiting(kind)]);
      const r = await call(await connect(refused.agent), 'reply_to_task', { task_id: 't-1', text: 'yes' });
      expect(r.isError).toBe(true);
      expect(text(r)).toBe(
        `task t-1 waits for a person's answer (a question of kind ${kind}): answer it in the console or with ` +
          '`npx cua reply t-1 "…"`; this server\'s callers may not (config mcp.callersMayApprove)',
      );
      expect(refused.replies).toEqual([]);

      const allowed = fakeAgent([waiting(kind), snapshot('t-1', { step: 4 })]);
      const ok = await call(await connect(allowed.agent, { callersMayApprove: true }), 'reply_to_task', {
        task_id: 't-1',
        text: 'yes',
      });
      expect(ok.isError).toBeFalsy();
      expect(allowed.replies).toEqual([{ id: 't-1', text: 'yes', questionId: 'q-1' }]);
    },
  );

  it("answers the model's question, naming the question it checked", async () => {
    const { agent, replies } = fakeAgent([waiting('model'), snapshot('t-1', { step: 4 })]);
    const r = await call(await connect(agent), 'reply_to_task', { task_id: 't-1', text: 'Lisbon' });
    expect(data(r)).toMatchObject({ status: 'running', step: 4, question: null });
    expect(replies).toEqual([{ id: 't-1', text: 'Lisbon', questionId: 'q-1' }]);
  });
});

describe('get_task and wait_for_task', () => {
  it('shows the question, who may answer it, the links and what to do next', async () => {
    const { agent } = fakeAgent([waiting('approval')]);
    const r = data(await call(await connect(agent), 'get_task', { task_id: 't-1' }));
    expect(r).toMatchObject({
      id: 't-1',
      status: 'waiting_for_user',
      question: { id: 'q-1', kind: 'approval', caller_may_answer: false },
      links: {
        temporal_ui: 'http://127.0.0.1:8233/namespaces/default/workflows/t-1',
        console: null,
        run_folder: '/runs/t-1',
        report: 'npx cua view t-1 (writes /runs/t-1/report.html)',
      },
    });
    expect(r['next']).toMatch(/^a person must answer this/);
  });

  it('waits past an ending status until the task has closed', async () => {
    const ended = { status: 'complete' as const, answer: 'done' };
    const { agent } = fakeAgent([
      snapshot('t-1'),
      snapshot('t-1', ended),
      snapshot('t-1', { ...ended, closed: true, workflowStatus: 'COMPLETED' }),
    ]);
    const r = data(await call(await connect(agent), 'wait_for_task', { task_id: 't-1', wait_seconds: 5 }));
    expect(r).toMatchObject({ status: 'complete', closed: true, answer: 'done' });
  });

  it('returns when the time is up, with the task still running', async () => {
    const { agent } = fakeAgent([snapshot('t-1')]);
    const r = data(await call(await connect(agent), 'wait_for_task', { task_id: 't-1', wait_seconds: 0.1 }));
    expect(r).toMatchObject({ status: 'running', closed: false });
  });

  it('refuses an unknown task and an over-long wait in one line', async () => {
    const client = await connect(fakeAgent([]).agent);
    const unknown = await call(client, 'get_task', { task_id: 'missing' });
    expect([unknown.isError, text(unknown)]).toEqual([true, 'no task with id missing']);
    const long = await call(client, 'wait_for_task', { task_id: 't-1', wait_seconds: 61 });
    expect(long.isError).toBe(true);
    expect(text(long)).toMatch(/wait_seconds is at most 60/);
    expect(text(long)).not.toContain('\n');
    const folder = await call(client, 'fork_task', { task_id: '../etc', step: 1 });
    expect(folder.isError).toBe(true);
  });
});
