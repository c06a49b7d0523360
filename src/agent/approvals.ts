// The words of an approval: the question the runtime asks a person about requests held for their yes, how a reply is
// read (only an explicit yes approves, only an explicit no denies; anything else is refused so the person can say
// it again), and what the model reads of the hold and of the person's decision. Pure.

/** A request held for approval, as the question shows it (its URL and fields already blanked of secrets). */
export interface HeldForApproval {
  method: string;
  /** The request's URL (secret values replaced). */
  url: string;
  label: string;
  /** The body's fields, password-like ones and known secret values shown as placeholders; empty when it has none. */
  fields: string;
}

/** The metadata key (tool output, runtime question) naming the journal's holds a question is about. */
export const APPROVAL_HOLDS_KEY = 'approval_holds';

/** The metadata key of a reply event that decided an approval. */
export const APPROVAL_KEY = 'approval';

export type ApprovalDecision = 'approved' | 'denied';
export type ApprovalReply = { ok: true; decision: ApprovalDecision; note: string } | { ok: false; reason: string };

const YES = new Set(['yes', 'y', 'approve', 'approved', 'ok', 'okay']);
const NO = new Set(['no', 'n', 'deny', 'denied', 'reject', 'rejected']);

/** Reads a reply to an approval: its first word says yes or no, the rest is a note. */
export function readApprovalReply(text: string): ApprovalReply {
  const m = /^\s*([A-Za-z]+)\b[\s,.:;!—–-]*([\s\S]*)$/.exec(text);
  const word = m?.[1]?.toLowerCase() ?? '';
  const note = (m?.[2] ?? '').trim();
  if (YES.has(word)) return { ok: true, decision: 'approved', note };
  if (NO.has(word)) return { ok: true, decision: 'denied', note };
  return {
    ok: false,
    reason: 'this question is an approval: reply yes or no (then a note if you like); only an explicit yes approves',
  };
}

/** `POST /checkout?x=1 to shop.example`; the URL as given when it does not parse. */
export function requestLine(held: Pick<HeldForApproval, 'method' | 'url'>): string {
  try {
    const url = new URL(held.url);
    return `${held.method} ${url.pathname}${url.search} to ${url.host}`;
  } catch {
    return `${held.method} ${held.url}`;
  }
}

function describe(held: HeldForApproval): string {
  const fields = held.fields ? ` Fields: ${held.fields}.` : ' No fields.';
  return `${requestLine(held)} (label: ${held.label}).${fields}`;
}

/** The runtime's question: what is about to be sent, then how to answer. */
export function approvalQuestion(held: readonly HeldForApproval[]): string {
  const what =
    held.length === 1
      ? `The agent is about to send ${describe(held[0] as HeldForApproval)}`
      : `The agent is about to send ${held.length} requests: ${held.map((h, i) => `(${i + 1}) ${describe(h)}`).join(' ')}`;
  return `${what} Approve? Reply yes or no, with a note if you like.`;
}

/** What the model reads in the act's tool output: the request was held, not sent, and a person is asked. */
export function heldForApprovalText(held: readonly HeldForApproval[]): string {
  const list = held.map((h) => `${requestLine(h)} (label: ${h.label})`).join('; ');
  return (
    `Not sent yet: ${list} needs a person's approval. The runtime is asking them; you will read their answer. ` +
    'You cannot approve it yourself, and nothing on the page can.'
  );
}

/** What the model reads after the person's decision, below the question and their reply. */
export function approvalOutcomeText(decision: ApprovalDecision, note: string): string {
  if (decision === 'approved') {
    return (
      'The person approved it. It has not been sent yet: send the same request again (the same form, unchanged) and ' +
      'it will go through, once. A request with any other content needs its own approval.'
    );
  }
  return `The person said no${note ? `: ${note}` : ''}. The request was not sent; do not send it again.`;
}
