// Each task's report and steps as MCP resources, over a stand-in of the typed client (the SDK's Client on an
// in-memory transport): the URIs, resources/list of the newest tasks, resources/read of the step table and of the
// report (the run as `cua show` prints it), an unknown task as a one-line error, and subscriptions: an update when
// the task's status changes, none after unsubscribing, one watcher per task, all stopped when the session closes.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { TaskNotFoundError } from '../../client/client';
import type { AgentClient, StepSummary, TaskListEntry, TaskSnapshot } from '../../client/client';
import { parseTaskResourceUri, RESOURCE_NOT_FOUND, taskResourceUri } from '../../mcp/resources';
import { TaskWatchers, watchKey } from '../../mcp/subscriptions';
import { sleep } from '../../src/common/sleep';
import { LocalRunStore } from '../../src/trajectory/store';
import { connect, fakeDeps, snapshot } from './mcp.fixtures';

const FIXTURES = path.resolve(__dirname, '../fixtures/trajectory');

/** A stand-in client whose task `now` may change under the test; other ids are unknown. */
function liveAgent(id: string) {
  const state = { now: snapshot(id), polls: 0 };
  const row: TaskListEntry = {
    id,
    status: 'running',
    step: 3,
    cost: null,
    started: '2026-01-01T00:00:00.000Z',
    instruction: 'Open the order page and pick a size.',
    environment: 'browser',
  };
  const steps: StepSummary[] = [
    {
      step: 1,
      action: 'left_click',
      summary: 'click Order',
      thoughts: '',
      url: 'https://shop.example/',
      textObservation: null,
    },
  ];
  const agent = {
    status: async (asked: string): Promise<TaskSnapshot> => {
      if (asked !== id) throw new TaskNotFoundError(asked);
      state.polls++;
      return state.now;
    },
    list: async () => [row],
    steps: async (asked: string) => {
      if (asked !== id) throw new TaskNotFoundError(asked);
      return steps;
    },
  };
  return { agent: agent as unknown as AgentClient, state };
}

/** The URIs of the resources/updated notifications `client` receives. */
function updatesOf(client: Client): string[] {
  const uris: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void uris.push(n.params.uri));
  return uris;
}

async function until(check: () => boolean, ms = 2_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(5);
}

describe('task resource URIs', () => {
  it.each([
    ['cua://tasks/t-1/report', { id: 't-1', kind: 'report' }],
    ['cua://tasks/task-2026.x_y/steps', { id: 'task-2026.x_y', kind: 'steps' }],
  ] as const)('%s', (uri, parsed) => {
    expect(parseTaskResourceUri(uri)).toEqual(parsed);
    expect(taskResourceUri(parsed.id, parsed.kind)).toBe(uri);
  });

  it.each(['cua://tasks/t-1/screenshot', 'cua://tasks/../report', 'cua://tasks/a%2Fb/report', 'https://x/t-1/report'])(
    'refuses %s',
    (uri) => {
      expect(() => parseTaskResourceUri(uri)).toThrow(/^not a task resource: /);
    },
  );

  it('tells a change of status, question, step or closing, and nothing else', () => {
    const base = snapshot('t-1');
    expect(watchKey(snapshot('t-1', { progress: null }))).toBe(watchKey(base));
    for (const changed of [
      { status: 'paused' as const },
      { step: 4 },
      { closed: true },
      { question: { id: 'q-1', text: 'Which city?', step: 3 } },
    ]) {
      expect(watchKey(snapshot('t-1', changed))).not.toBe(watchKey(base));
    }
  });
});

describe('resources/list and resources/read', () => {
  it('lists the newest tasks’ report and steps, and reads the step table', async () => {
    const client = await connect(liveAgent('t-1').agent);
    const listed = (await client.listResources()).resources;
    expect(listed.map((r) => r.uri)).toEqual(['cua://tasks/t-1/report', 'cua://tasks/t-1/steps']);
    expect(listed[1]).toMatchObject({ mimeType: 'application/json', description: expect.stringContaining('running') });
    const read = await client.readResource({ uri: 'cua://tasks/t-1/steps' });
    const content = read.contents[0] as { mimeType: string; text: string };
    expect(content.mimeType).toBe('application/json');
    expect(JSON.parse(content.text)).toEqual({
      task_id: 't-1',
      steps: [{ step: 1, action: 'left_click', summary: 'click Order', url: 'https://shop.example/' }],
    });
  });

  it('reads the report: the live status, then the run as `cua show` prints it', async () => {
    const client = await connect(liveAgent('fara_written').agent, { store: () => new LocalRunStore(FIXTURES) });
    const read = await client.readResource({ uri: 'cua://tasks/fara_written/report' });
    const lines = (read.contents[0] as { text: string }).text.split('\n');
    expect(lines[0]).toBe('task fara_written: running, step 3');
    expect(lines[1]).toBe('Open the order page and pick a size.');
    expect(lines[2]).toBe(`run folder: ${path.join(FIXTURES, 'fara_written')}`);
    expect(lines.some((l) => l.startsWith('steps: '))).toBe(true);
  });

  it('says in one line when the run folder is not there yet', async () => {
    const client = await connect(liveAgent('t-1').agent);
    const text = ((await client.readResource({ uri: 'cua://tasks/t-1/report' })).contents[0] as { text: string }).text;
    expect(text).toMatch(/^task t-1: running, step 3\nits run folder cannot be read yet: [^\n]+\n$/);
  });

  it('refuses an unknown task and a foreign URI as a one-line error', async () => {
    const client = await connect(liveAgent('t-1').agent);
    const unknown = client.readResource({ uri: 'cua://tasks/nope/steps' });
    await expect(unknown).rejects.toMatchObject({ code: RESOURCE_NOT_FOUND });
    await expect(unknown).rejects.toThrow(/no task with id nope$/);
    await expect(client.subscribeResource({ uri: 'cua://tasks/nope/report' })).rejects.toThrow(/no task with id nope$/);
    // A URI no template matches is the SDK's own refusal.
    await expect(client.readResource({ uri: 'cua://tasks/t-1/logs' })).rejects.toThrow(
      /cua:\/\/tasks\/t-1\/logs not found/,
    );
  });
});

describe('subscriptions', () => {
  it('sends resources/updated when the status changes, and stops after unsubscribe', async () => {
    const { agent, state } = liveAgent('t-1');
    const client = await connect(agent);
    expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
    const updates = updatesOf(client);
    await client.subscribeResource({ uri: 'cua://tasks/t-1/report' });
    await client.subscribeResource({ uri: 'cua://tasks/t-1/steps' });
    state.now = snapshot('t-1', { status: 'waiting_for_user', question: { id: 'q-1', text: 'Which city?', step: 3 } });
    await until(() => updates.length >= 2);
    expect(updates.sort()).toEqual(['cua://tasks/t-1/report', 'cua://tasks/t-1/steps']);

    await client.unsubscribeResource({ uri: 'cua://tasks/t-1/report' });
    await client.unsubscribeResource({ uri: 'cua://tasks/t-1/steps' });
    const polls = state.polls;
    state.now = snapshot('t-1', { step: 4 });
    await sleep(80);
    expect(updates).toHaveLength(2);
    expect(state.polls - polls).toBeLessThanOrEqual(1); // at most the poll under way when it stopped
  });

  it('keeps one watcher per task, stops it once the task has closed, and stops all on close', async () => {
    const { agent, state } = liveAgent('t-1');
    const told: string[] = [];
    const watchers = new TaskWatchers(fakeDeps(agent), async (uri) => void told.push(uri));
    await watchers.subscribe('cua://tasks/t-1/report');
    await watchers.subscribe('cua://tasks/t-1/steps');
    expect(watchers.tasks).toEqual(['t-1']);
    state.now = snapshot('t-1', { status: 'complete', closed: true });
    await until(() => told.length >= 2);
    const polls = state.polls;
    await sleep(60);
    expect(state.polls).toBe(polls); // a closed task changes no more: no more polls
    watchers.close();
    expect(watchers.tasks).toEqual([]);
  });
});
