// The browser driver's side of the request journal (src/browser/request-journal.ts): the journal is the run's
// `requests.jsonl` in the run store, so a worker that re-opens the run after a lost one finds what was in flight; what
// the session_restored note and the runtime's question say of requests in doubt; and the resolution a user's reply
// to that question writes.
import { randomUUID } from 'node:crypto';
import { knownSecretValues, redactSecrets } from '../../src/agent/secrets';
import {
  REQUEST_JOURNAL_FILE,
  RequestJournal,
  heldBack,
  inDoubt,
  parseJournal,
} from '../../src/browser/request-journal';
import type { HeldRequest, JournalDecision, JournalLine, JournalStart } from '../../src/browser/request-journal';
import { heldForApproval, holdsNamed, isDecided } from '../../src/browser/approval-lines';
import { APPROVAL_KEY, readApprovalReply } from '../../src/agent/approvals';
import { rulesForTask } from '../../src/contract/approvals';
import type { RunStore } from '../../src/trajectory/store';
import type { ActivityDeps, RunFiles } from '../support';

const key = (taskId: string) => `${taskId}/${REQUEST_JOURNAL_FILE}`;

export async function readJournal(store: RunStore, taskId: string): Promise<JournalLine[]> {
  return parseJournal((await store.readText(key(taskId))) ?? '');
}

/** A journal for a session of the run opening now, with the entries in doubt the run store holds. */
export async function openJournal(deps: ActivityDeps, files: RunFiles, taskId: string): Promise<RequestJournal> {
  const { store } = files;
  const secrets = knownSecretValues(deps.config.secrets ?? {}, process.env);
  const input = await files.input(taskId);
  return new RequestJournal({
    append: (line) => store.appendLine(key(taskId), JSON.stringify(line)),
    read: () => readJournal(store, taskId),
    inDoubt: inDoubt(await readJournal(store, taskId)),
    allowResend: deps.config.browser.resendInDoubt,
    beforeSend: deps.config.browser.journalBeforeSend,
    approvals: rulesForTask(deps.config.approvals, input.approvals),
    redact: (text) => redactSecrets(text, secrets),
    idPrefix: randomUUID().slice(0, 8),
    onError: (err) => deps.log?.(`${taskId}: the request journal could not be written: ${String(err)}`),
  });
}

/** A reply to the runtime's question settles the requests whose resend was held back: they may be sent again. */
export async function resolveHeldRequests(store: RunStore, taskId: string): Promise<number> {
  const held = heldBack(await readJournal(store, taskId));
  const at = new Date().toISOString();
  for (const entry of held) {
    await store.appendLine(key(taskId), JSON.stringify({ kind: 'resolved', id: entry.id, at, how: 'user_replied' }));
  }
  return held.length;
}

/**
 * A person's reply to an approval: a decision line for each hold (once, so a retried reply writes none twice), and
 * what the reply event's metadata keeps of it. The reply validator refused anything but an explicit yes or no.
 */
export async function decideApproval(
  store: RunStore,
  taskId: string,
  req: { holds: readonly string[]; questionId: string; text: string },
): Promise<Record<string, unknown>> {
  const read = readApprovalReply(req.text);
  const decision = read.ok ? read.decision : 'denied';
  const note = read.ok ? read.note : req.text;
  const lines = await readJournal(store, taskId);
  const holds = holdsNamed(lines, req.holds);
  const at = new Date().toISOString();
  for (const hold of holds) {
    if (isDecided(lines, hold.id)) continue;
    const line: JournalDecision = {
      kind: decision,
      id: hold.id,
      request_sha256: hold.approval?.request_sha256 ?? '',
      at,
      question_id: req.questionId,
      note,
    };
    await store.appendLine(key(taskId), JSON.stringify(line));
  }
  const requests = holds.map((h) => ({ ...heldForApproval(h), request_sha256: h.approval?.request_sha256 ?? '' }));
  return { [APPROVAL_KEY]: { decision, note, requests } };
}

const clock = (iso: string) => `${iso.slice(11, 19)} UTC`;

/** One request for people and the model: "POST http://…/order (qty=3), sent at 10:32:05 UTC". */
export function describeRequest(entry: JournalStart): string {
  const body = entry.body_preview ? ` (${entry.body_preview})` : '';
  return `${entry.method} ${entry.url}${body}, sent at ${clock(entry.started_at)}`;
}

/** What the act in flight when the worker was lost was, for the note (from the workflow). */
export type ActInDoubt = { summary: string; startedAt: string };

/**
 * The session_restored note's part about what may or may not have happened: the act in flight when the worker was
 * lost, the requests with no recorded answer, and what the restored page shows. Empty when nothing is in doubt.
 */
export function inDoubtText(
  act: ActInDoubt | undefined,
  requests: readonly JournalStart[],
  page: { url: string; title: string },
): string {
  if (!act && requests.length === 0) return '';
  const parts: string[] = [];
  if (act) {
    parts.push(
      `Your last action, ${act.summary}, started at ${clock(act.startedAt)} and may or may not have taken effect ` +
        'before the browser was lost.',
    );
  }
  if (requests.length > 0) {
    const list = requests.map(describeRequest).join('; ');
    parts.push(
      `${requests.length === 1 ? 'A request that changes something was' : 'Requests that change something were'} ` +
        `sent and no answer was recorded: ${list}. It may already have been received; the same request is not sent ` +
        'again without asking the user.',
    );
  }
  parts.push(`The restored page shows ${page.url || 'a blank page'}${page.title ? ` ("${page.title}")` : ''}.`);
  return parts.join(' ');
}

/** The runtime's question when a resend was held back (an ask_user_question with asked_by "runtime"). */
export function heldBackQuestion(held: readonly HeldRequest[]): string {
  const list = held.map((h) => describeRequest(h.entry)).join('; ');
  return (
    `A request sent just before the browser was lost has no recorded answer, so it may already have been received: ` +
    `${list}. The agent has just tried to send it again; it was not sent. Should it be sent again (it may then ` +
    'happen twice), or should the agent first check whether it took effect?'
  );
}

/** The tool output's line about resends held back or let through. */
export function heldBackText(held: readonly HeldRequest[], resent: readonly JournalStart[], asking: boolean): string {
  const lines: string[] = [];
  if (held.length > 0) {
    lines.push(
      `Not sent: ${held.map((h) => describeRequest(h.entry)).join('; ')} — the same request was sent before the ` +
        `browser was lost and may already have been received. ${
          asking
            ? 'The user is asked whether to send it again.'
            : 'Nobody can be asked in this unattended task: check whether it took effect instead.'
        }`,
    );
  }
  if (resent.length > 0) {
    lines.push(
      `Sent again (this worker allows resending requests in doubt): ${resent.map(describeRequest).join('; ')}.`,
    );
  }
  return lines.join('\n');
}
