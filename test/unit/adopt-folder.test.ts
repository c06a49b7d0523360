// Specification of reading a run folder the original (Fara) wrote for `cua adopt` (issue 28): what can be adopted and
// the one line that says why not, the ids its events get (so the chat is rebuilt from them), the question it waits
// on, and its copy into a run store (the source only read).
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { checkAdoptable } from '../../client/adopt';
import { InvalidTaskInputError } from '../../client/errors';
import { main } from '../../cli/cli';
import { historyForStep, PAGE_REOPENED_KEY } from '../../src/agent/history';
import { preObservation, sessionRestored, userReply } from '../../src/trajectory/events';
import { FolderNotAdoptableError } from '../../src/trajectory/errors';
import { pendingQuestion, withOurIds } from '../../src/trajectory/fara-events';
import { importAdoptedFolder, readAdoptableFolder } from '../../src/trajectory/fara-folder';
import { readRun } from '../../src/trajectory/reader';
import type { Event } from '../../src/trajectory/schema';
import { LocalRunStore } from '../../src/trajectory/store';

const FIXTURES = path.join(__dirname, '../fixtures/trajectory');
const WAITING = path.join(FIXTURES, 'fara_waiting');
const QUESTION = 'Which city should I search in?';

let root: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'adopt-folder-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** A copy of the waiting fixture, changed by `edit` (its events as parsed JSON objects). */
async function copyWith(
  edit: { events?: (events: Record<string, unknown>[]) => Record<string, unknown>[]; status?: unknown } = {},
): Promise<string> {
  const dir = path.join(root, 'copy');
  await fs.cp(WAITING, dir, { recursive: true });
  const file = path.join(dir, 'solver_log/events.jsonl');
  if (edit.events) {
    const lines = (await fs.readFile(file, 'utf8')).trim().split('\n');
    const events = edit.events(lines.map((l) => JSON.parse(l) as Record<string, unknown>));
    await fs.writeFile(file, events.map((e) => `${JSON.stringify(e)}\n`).join(''));
  }
  if (edit.status) await fs.writeFile(path.join(dir, 'solver_log/status.json'), JSON.stringify(edit.status));
  return dir;
}

async function treeHash(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (d: string): Promise<void> => {
    for (const entry of (await fs.readdir(d, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, entry.name);
      hash.update(path.relative(dir, p));
      if (entry.isDirectory()) await walk(p);
      else hash.update(await fs.readFile(p));
    }
  };
  await walk(dir);
  return hash.digest('hex');
}

describe('readAdoptableFolder', () => {
  it('reads the waiting fixture: two steps, the question, the last URL, the events with our ids', async () => {
    const found = await readAdoptableFolder(WAITING);
    expect(found).toMatchObject({ dir: WAITING, steps: 2, question: QUESTION, lastUrl: 'http://127.0.0.1/' });
    expect(found.events.map((e) => e.id)).toEqual([
      'user-0000-task-g0',
      'step-0000-pre-g0',
      'step-0001-pre-g0',
      'step-0001-action-g0',
      'step-0001-tool-g0',
      'step-0001-post-g0',
      'step-0002-pre-g0',
      'step-0002-action-g0',
      'step-0002-tool-g0',
      'step-0002-post-g0',
    ]);
    const original = (await readRun(WAITING)).events;
    found.events.forEach((e, i) => {
      expect(e.metadata).toMatchObject({ original_id: original[i]?.id });
      if (e.type === 'observation' && e.action_id !== null) expect(e.action_id).toMatch(/^step-000\d-action-g0$/);
    });
  });

  it.each<[string, () => Promise<string>, RegExp]>([
    ['a path that does not exist', async () => path.join(root, 'nothing'), /: no such folder$/],
    [
      'a file',
      async () => {
        await fs.writeFile(path.join(root, 'file'), '');
        return path.join(root, 'file');
      },
      /: not a folder$/,
    ],
    ['a folder without task.json', async () => root, /: no task\.json: not a run folder Fara wrote$/],
    [
      'a folder without events',
      async () => {
        const dir = await copyWith();
        await fs.writeFile(path.join(dir, 'solver_log/events.jsonl'), '');
        return dir;
      },
      /: no events \(solver_log\/events\.jsonl is missing or empty\)$/,
    ],
    [
      'a finished run',
      async () => path.join(FIXTURES, 'original_run'),
      /: its run is complete \(solver_log\/status\.json\): only a run that is waiting_for_user or running can be adopted$/,
    ],
    [
      'an aborted run',
      () => copyWith({ status: { status: 'aborted', outcome: null } }),
      /: its run is aborted .*only a run that is waiting_for_user or running can be adopted$/,
    ],
    ['a damaged status.json', () => copyWith({ status: { status: 'paused' } }), /status\.json: status/],
    [
      'two actions in a row',
      () => copyWith({ events: (events) => events.filter((_e, i) => i !== 4 && i !== 5 && i !== 6) }),
      /its events break the format's rules: two actions in a row \(e7a40b2c-.*, 4d5e6f7a-.*\)$/,
    ],
    [
      'no task message',
      () => copyWith({ events: (events) => events.slice(1) }),
      /its events break the format's rules: it has no task message/,
    ],
  ])('refuses %s in one line naming the folder', async (_what, make, reason) => {
    const dir = await make();
    const error = await readAdoptableFolder(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FolderNotAdoptableError);
    const message = (error as Error).message;
    expect(message.startsWith(`cannot adopt ${dir}: `)).toBe(true);
    expect(message).toMatch(reason);
    expect(message.split('\n')).toHaveLength(1);
    // The client's form of the same refusal: an invalid task input (field `folder`), the same line.
    await expect(checkAdoptable(dir)).rejects.toMatchObject({
      constructor: InvalidTaskInputError,
      field: 'folder',
      message,
    });
  });

  it('adopts a running folder, and a waiting one whose reply is already recorded, with no question', async () => {
    const running = await copyWith({ status: { status: 'running', outcome: null } });
    expect(await readAdoptableFolder(running)).toMatchObject({ steps: 2, question: null });
    await fs.rm(running, { recursive: true });
    const replied = await copyWith({
      events: (events) => [
        ...events,
        {
          type: 'observation',
          id: 'a0b1c2d3',
          observation_type: 'user_message',
          metadata: {},
          timestamp: '2026-07-21T10:00:00',
          action_id: null,
          content: 'Lisbon',
          message_type: 'critical_point_response',
        },
      ],
    });
    const found = await readAdoptableFolder(replied);
    expect(found).toMatchObject({ steps: 2, question: null });
    expect(found.events.at(-1)?.id).toBe('user-0002-reply-g0');
  });
});

describe('the question a folder waits on', () => {
  const asked = (args: Record<string, unknown>, name = 'ask_user_question'): Event[] => [
    {
      type: 'action',
      id: 'a',
      timestamp: 't',
      action_name: name,
      content: { action: name, arguments: args },
      action_nl_description: 'stop here',
      agent_state: { agent: '', tools_available: [], plan: [], facts: [] },
      llm_conversation: { messages: [] },
      grounding: null,
    },
  ];
  it.each<[string, Event[], Parameters<typeof pendingQuestion>[1], string | null, string | null]>([
    ['the question asked', asked({ question: 'Which?' }), 'waiting_for_user', 'other', 'Which?'],
    ['else the outcome recorded with the status', asked({}, 'terminate'), 'waiting_for_user', 'Proceed?', 'Proceed?'],
    ['else the action described', asked({}, 'terminate'), 'waiting_for_user', null, 'stop here'],
    ['none while running', asked({ question: 'Which?' }), 'running', null, null],
  ])('%s', (_what, events, status, answer, expected) => {
    expect(pendingQuestion(events, status, answer === null ? null : { answer })).toBe(expected);
  });
});

describe('withOurIds', () => {
  it('leaves a stream whose ids are all ours as it is', async () => {
    const { events } = await readAdoptableFolder(WAITING);
    expect(withOurIds(events)).toEqual(events);
  });

  it('rebuilds the chat: both steps answered, the reply and the reopened page with step 3', async () => {
    const { events } = await readAdoptableFolder(WAITING);
    const url = 'http://127.0.0.1/';
    const more = [
      userReply(2, 'Lisbon'),
      sessionRestored(3, `reopened at ${url}`, { generation: 1, metadata: { [PAGE_REOPENED_KEY]: url } }),
      preObservation(3, { screenshot_path: 'screenshot_3_g1_pre.png', url }, { generation: 1 }),
    ];
    const entries = historyForStep([...events, ...more], 3, 1);
    expect(entries.map((t) => t.kind)).toEqual(['task', 'assistant', 'observation', 'assistant', 'observation']);
    expect(entries[0]).toMatchObject({ text: 'Search hotels in the city I want.', screenshot: 'screenshot_1_pre.png' });
    expect(entries[3]?.kind === 'assistant' && entries[3].text).toContain('"ask_user_question"');
    expect(entries[4]).toMatchObject({
      screenshot: 'screenshot_3_g1_pre.png',
      userReply: `Lisbon\n\nreopened at ${url}`,
    });
  });
});

describe('importAdoptedFolder', () => {
  it('copies the folder into the store under the new id, the source unchanged', async () => {
    const before = await treeHash(WAITING);
    const found = await readAdoptableFolder(WAITING);
    const copied = await importAdoptedFolder(found, new LocalRunStore(root), 'adopted-1');
    expect(copied.sort()).toEqual(
      [
        'metadata.json',
        'screenshot_0_post.png',
        'screenshot_0_pre.png',
        'screenshot_1_post.png',
        'screenshot_1_pre.png',
        'screenshot_2_post.png',
        'screenshot_2_pre.png',
        'solver_log/events.jsonl',
        'solver_log/status.json',
        'task.json',
      ].sort(),
    );
    const run = await readRun(path.join(root, 'adopted-1'));
    const adoptedFrom = { folder: WAITING, run_id: 'task_7_3c1d9e0a', status: 'waiting_for_user', steps: 2 };
    expect(run).toMatchObject({ fileStatus: 'waiting_for_user', outcome: { answer: QUESTION }, warnings: [] });
    expect(run.task).toMatchObject({ task_id: 'task_7', metadata: { adopted_from: adoptedFrom } });
    expect(run.metadata).toMatchObject({ run_id: 'adopted-1', stats: { steps: 2, adopted_from: adoptedFrom } });
    expect(run.events).toEqual(found.events);
    expect(await treeHash(WAITING)).toBe(before);
  });
});

describe('cua adopt (before it connects)', () => {
  it('says in one line why a folder cannot be adopted (exit 2)', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await main(['adopt', path.join(FIXTURES, 'original_run')])).toBe(2);
      expect(errors.mock.calls).toHaveLength(1);
      expect(String(errors.mock.calls[0]?.[0])).toMatch(/^cua: cannot adopt .*original_run: its run is complete/);
    } finally {
      errors.mockRestore();
    }
  });
});
