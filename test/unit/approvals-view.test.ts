// Approvals in the report and `cua show`: a question the runtime asked about requests an approval rule held is marked
// as such, with what was held and how the person decided (approved, denied with the note, or no answer yet), read from
// the question's hold ids, the reply's `metadata.approval` and the run's request journal (requests.jsonl).
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { showCommand } from '../../cli/commands/show';
import { approvalLines } from '../../src/viewer/run-text';
import {
  actionEvent,
  postObservation,
  preObservation,
  runtimeQuestion,
  taskMessage,
  toolOutput,
  userReply,
} from '../../src/trajectory/events';
import type { RunRecord } from '../../src/trajectory/reader';
import type { Event } from '../../src/trajectory/schema';
import { TaskSchema } from '../../src/trajectory/schema';
import { TrajectoryWriter } from '../../src/trajectory/writer';
import { approvalsByStep, approvalsOf, journalApprovals } from '../../src/viewer/approvals';
import { renderTrajectoryHtml } from '../../src/viewer/html';
import { buildTrajectoryView } from '../../src/viewer/model';
import { renderTrajectoryReport } from '../../src/viewer/report';

const T = '2026-01-01T00:00:00.000Z';
const stamp = { timestamp: T };
const QUESTION =
  'The agent is about to send POST /checkout to shop.example (label: payment). Fields: item=kettle&card=***. ' +
  'Approve? Reply yes or no, with a note if you like.';
const CHECKOUT = { method: 'POST', url: 'https://shop.example/checkout', label: 'payment', fields: 'item=kettle' };

/** A held line of the journal, as the browser writes it. */
const held = (id: string, url = CHECKOUT.url) =>
  JSON.stringify({
    kind: 'held',
    id,
    at: T,
    step: 1,
    generation: 0,
    approval: {
      label: 'payment',
      method: 'POST',
      url,
      resource_type: 'document',
      body_preview: '',
      request_sha256: 's',
    },
  });
const decided = (kind: 'approved' | 'denied', id: string, note = '') =>
  JSON.stringify({ kind, id, request_sha256: 's', at: T, question_id: 'q1', note });

/** A click whose POST was held, the runtime's question, the person's reply (if any), then the model's next step. */
function events(reply?: { text: string; decision?: 'approved' | 'denied'; note?: string }): Event[] {
  const act = (step: number, action: string, args: Record<string, unknown>) =>
    actionEvent(step, { action_name: action, content: { action, arguments: args } }, stamp);
  const holds = { ...stamp, metadata: { approval_holds: ['h1'] } };
  const approval = reply?.decision
    ? {
        approval: {
          decision: reply.decision,
          note: reply.note ?? '',
          requests: [{ ...CHECKOUT, request_sha256: 's' }],
        },
      }
    : {};
  return [
    taskMessage('Order the kettle.', stamp),
    preObservation(1, { url: 'https://shop.example/' }, stamp),
    act(1, 'left_click', { coordinate: [500, 500], thoughts: 'Place the order.' }),
    toolOutput(1, 'step-0001-action-g0', { output: 'Not sent yet: …' }, holds),
    postObservation(1, 'step-0001-action-g0', { url: 'https://shop.example/' }, stamp),
    runtimeQuestion(1, QUESTION, holds),
    ...(reply ? [userReply(1, reply.text, { ...stamp, metadata: { question_id: 'q1', ...approval } })] : []),
    preObservation(2, { url: 'https://shop.example/' }, stamp),
    act(2, 'terminate', { answer: 'done', thoughts: 'Done.' }),
  ];
}

function record(evs: Event[], requestJournal = ''): RunRecord & { requestJournal: string } {
  return {
    taskId: 'run-1',
    location: '/tmp/run-1',
    task: TaskSchema.parse({
      task_id: 'run-1',
      instruction: 'Order the kettle.',
      environment_config: { start_url: 'https://shop.example/' },
      metadata: { profile: 'fara-1.5' },
    }),
    events: evs,
    status: 'complete',
    fileStatus: 'complete',
    outcome: { answer: 'done' },
    verification: {},
    metadata: { stats: {}, run_id: 'run-1', created_at: T },
    runState: {},
    warnings: [],
    requestJournal,
  };
}

describe('an approval question and its outcome', () => {
  it('approved: the request and "approved by the person", from the reply', () => {
    const [approval] = approvalsOf(events({ text: 'yes', decision: 'approved' })).values();
    expect(approval).toMatchObject({ outcome: 'approved', note: '' });
    expect(approval?.line).toBe(
      'Approval asked: POST /checkout to shop.example (label payment) — approved by the person',
    );
  });

  it('denied: the note the person gave', () => {
    const [approval] = approvalsOf(events({ text: 'no: too dear', decision: 'denied', note: 'too dear' })).values();
    expect(approval?.line).toBe('Approval asked: POST /checkout to shop.example (label payment) — denied: too dear');
  });

  it('no reply yet: the held request from the journal, no answer yet', () => {
    const [approval] = approvalsOf(events(), `${held('h1')}\n`).values();
    expect(approval).toMatchObject({ outcome: 'pending' });
    expect(approval?.line).toBe('Approval asked: POST /checkout to shop.example (label payment) — no answer yet');
  });

  it('a decision in the journal whose reply event is missing still shows, and bad lines are skipped', () => {
    const journal = ['{oops', held('h1'), '{"kind":"held","id":"x"}', decided('denied', 'h1', 'not now')].join('\n');
    expect(journalApprovals(journal).held.size).toBe(1);
    const [approval] = approvalsOf(events(), journal).values();
    expect(approval?.line).toBe('Approval asked: POST /checkout to shop.example (label payment) — denied: not now');
  });

  it("with neither the reply's requests nor the journal, the count of held requests", () => {
    const [approval] = approvalsOf(events({ text: 'yes' })).values();
    expect(approval?.line).toBe('Approval asked: 1 held request — no answer yet');
  });

  it("other questions, the model's included, are not approvals", () => {
    const evs = events({ text: 'yes', decision: 'approved' }).map((e) =>
      e.type === 'action' && e.id.includes('asked') ? { ...e, metadata: { asked_by: 'runtime' } } : e,
    );
    expect(approvalsOf(evs).size).toBe(0);
    expect(approvalsByStep(evs)).toEqual([null, null, null]);
  });
});

describe('the report', () => {
  it('marks the question step with an approval badge and the outcome line', () => {
    const run = record(events({ text: 'no: too dear', decision: 'denied', note: 'too dear' }));
    const view = buildTrajectoryView(run, () => undefined);
    expect(view.steps.map((s) => s.approval?.outcome ?? null)).toEqual([null, 'denied', null]);
    const html = renderTrajectoryHtml(view, new Map());
    expect(html).toContain('<span class="badge approval denied">approval denied</span>');
    expect(html).toContain(
      '<p class="approval-line" data-outcome="denied">Approval asked: POST /checkout to shop.example (label payment) ' +
        '— denied: too dear</p>',
    );
  });

  it('escapes what the page and the person wrote', () => {
    const evil = '<img src=x onerror="alert(1)">';
    const html = renderTrajectoryHtml(
      buildTrajectoryView(record(events({ text: `no ${evil}`, decision: 'denied', note: evil })), () => undefined),
      new Map(),
    );
    expect(html).not.toContain(evil);
    expect(html).toContain('denied: &lt;img src=x');
  });
});

describe('from a run folder: the report and `cua show`', () => {
  let root = '';
  afterEach(async () => {
    vi.restoreAllMocks();
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  async function runFolder(evs: Event[], journal: string): Promise<string> {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'cua-approvals-view-'));
    const task = { task_id: 'run-1', instruction: 'Order the kettle.', environment_config: {}, metadata: {} };
    const w = await TrajectoryWriter.create(root, 'run-1', task);
    for (const e of evs) await w.appendEvent(e);
    await fs.writeFile(path.join(root, 'run-1', 'requests.jsonl'), journal);
    return path.join(root, 'run-1');
  }

  it('a pending approval reads its request from requests.jsonl in both', async () => {
    const dir = await runFolder(events(), `${held('h1')}\n`);
    const line = 'Approval asked: POST /checkout to shop.example (label payment) — no answer yet';
    expect((await renderTrajectoryReport(dir)).html).toContain(line);
    const out: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((text: string) => void out.push(text));
    expect(await showCommand([dir])).toBe(0);
    const at = out.findIndex((l) => l.includes('ask_user_question'));
    expect(out[at + 1]).toBe(`      ${line}`);
    out.length = 0;
    expect(await showCommand([dir, '--json'])).toBe(0);
    const steps = (JSON.parse(out[0] ?? '{}') as { steps: { approval?: { outcome: string } }[] }).steps;
    expect(steps.map((s) => s.approval?.outcome ?? null)).toEqual([null, 'pending', null]);
  });

  it('approved: one line under the question', () => {
    const approvals = approvalsByStep(events({ text: 'yes', decision: 'approved' }));
    expect(approvals.flatMap(approvalLines)).toEqual([
      '      Approval asked: POST /checkout to shop.example (label payment) — approved by the person',
    ]);
  });
});
