// The approvals of a run as the report and `cua show` mark them: each question the runtime asked about requests an
// approval rule held (an ask_user_question with `metadata.approval_holds`), what it was about and how the person
// decided, e.g. "Approval asked: POST /checkout to shop.example (label payment) — denied: too dear".
//
// Read from the run folder: the question's hold ids, the reply's `metadata.approval` (decision, note, requests), and
// the request journal's lines (requests.jsonl: a `held` line per hold, an `approved` or `denied` line per decision),
// which still tell what was held and how it was decided when the reply event is missing. Lenient: a line or field
// that does not read is skipped. Pure.
import { z } from 'zod';
import { APPROVAL_HOLDS_KEY, APPROVAL_KEY, requestLine } from '../agent/approvals';
import type { Event } from '../trajectory/schema';
import { buildSteps } from '../trajectory/steps';
import { recordOf } from './run-settings';
import type { ApprovalOutcome, ViewApproval } from './view';

export type { ApprovalOutcome, ViewApproval } from './view';

const HeldLineSchema = z.looseObject({
  kind: z.literal('held'),
  id: z.string(),
  approval: z.looseObject({ label: z.string().catch(''), method: z.string().catch(''), url: z.string().catch('') }),
});
const DecisionLineSchema = z.looseObject({
  kind: z.enum(['approved', 'denied']),
  id: z.string(),
  note: z.string().catch(''),
});
const ReplyApprovalSchema = z.looseObject({
  decision: z.enum(['approved', 'denied']),
  note: z.string().catch(''),
  requests: z
    .array(z.looseObject({ method: z.string().catch(''), url: z.string().catch(''), label: z.string().catch('') }))
    .catch([]),
});

type Described = { method: string; url: string; label: string };

interface JournalApprovals {
  held: Map<string, Described>;
  decided: Map<string, { outcome: 'approved' | 'denied'; note: string }>;
}

/** The approval lines of a request journal's text (requests.jsonl); lines that do not read are skipped. */
export function journalApprovals(text: string): JournalApprovals {
  const found: JournalApprovals = { held: new Map(), decided: new Map() };
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      continue;
    }
    const held = HeldLineSchema.safeParse(value);
    if (held.success) found.held.set(held.data.id, held.data.approval);
    const decided = DecisionLineSchema.safeParse(value);
    if (decided.success && !found.decided.has(decided.data.id)) {
      found.decided.set(decided.data.id, { outcome: decided.data.kind, note: decided.data.note });
    }
  }
  return found;
}

const describe = (r: Described) => `${requestLine(r)} (label ${r.label})`;

/** The one line: `Approval asked: <requests> — approved by the person` / `— denied: <note>` / `— no answer yet`. */
export function approvalLine(requests: string, outcome: ApprovalOutcome, note: string): string {
  const said =
    outcome === 'approved'
      ? `approved by the person${note ? ` (${note})` : ''}`
      : outcome === 'denied'
        ? `denied${note ? `: ${note}` : ' (no note)'}`
        : 'no answer yet';
  return `Approval asked: ${requests} — ${said}`;
}

function holdIdsOf(event: Event): string[] | undefined {
  if (event.type !== 'action') return undefined;
  const metadata = recordOf(event.metadata);
  if (metadata['asked_by'] !== 'runtime') return undefined;
  const holds = metadata[APPROVAL_HOLDS_KEY];
  return Array.isArray(holds) ? holds.filter((h): h is string => typeof h === 'string') : undefined;
}

/** The reply's decision: the first person's reply after the question, before the next action. */
function replyAfter(events: readonly Event[], index: number): z.infer<typeof ReplyApprovalSchema> | undefined {
  for (const event of events.slice(index + 1)) {
    if (event.type === 'action') return undefined;
    if (event.type !== 'observation' || event.observation_type !== 'user_message') continue;
    if (event.message_type !== 'critical_point_response') continue;
    const parsed = ReplyApprovalSchema.safeParse(recordOf(event.metadata)[APPROVAL_KEY]);
    return parsed.success ? parsed.data : undefined;
  }
  return undefined;
}

function approvalOf(events: readonly Event[], index: number, holds: string[], journal: JournalApprovals): ViewApproval {
  const reply = replyAfter(events, index);
  const fromJournal = holds.flatMap((id) => {
    const held = journal.held.get(id);
    return held ? [held] : [];
  });
  const shown = reply?.requests.length ? reply.requests : fromJournal;
  const requests = shown.length
    ? shown.map(describe).join('; ')
    : `${holds.length} held request${holds.length === 1 ? '' : 's'}`;
  const decided = holds.map((id) => journal.decided.get(id)).find((d) => d !== undefined);
  const outcome: ApprovalOutcome = reply?.decision ?? decided?.outcome ?? 'pending';
  const note = reply ? reply.note : (decided?.note ?? '');
  return { requests, outcome, note, line: approvalLine(requests, outcome, note) };
}

/** The run's approval questions by the question's event id, read from its events and its journal's text. */
export function approvalsOf(events: readonly Event[], journalText = ''): Map<string, ViewApproval> {
  const journal = journalApprovals(journalText);
  const approvals = new Map<string, ViewApproval>();
  events.forEach((event, index) => {
    const holds = holdIdsOf(event);
    if (holds?.length) approvals.set(event.id, approvalOf(events, index, holds, journal));
  });
  return approvals;
}

/** The approval of each step as `stepSummaries` lists them (null for steps that are not an approval question). */
export function approvalsByStep(events: readonly Event[], journalText = ''): (ViewApproval | null)[] {
  const approvals = approvalsOf(events, journalText);
  return buildSteps(events).flatMap((s) => (s.action ? [approvals.get(s.action.id) ?? null] : []));
}
