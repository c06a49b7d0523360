// The journal of requests that change something (a form post, a fetch or XHR with POST, PUT, PATCH or DELETE): each
// is written as it starts and as it ends, so that after a lost worker a request with a start and no end is known to
// be in doubt — it may or may not have reached its server. While any entry is in doubt, the session intercepts its
// requests: one with the same method, URL and body as an entry in doubt is held back (never sent) until the user has
// been asked, unless the worker allows resending. Bodies are journaled as a hash and a short preview with secret
// values and password-like fields blanked: a sign-in post carries the password.
//
// Approvals (approval-gate.ts) use the same journal: a request an approval rule holds is written as `held` with its
// `approval` (label, method, URL, preview, and the hash of method, URL and body), never as a start, since it was not
// sent, so the in-doubt rule never asks about it. A person's decision is an `approved` or `denied` line keyed by that
// hash; an approved request's send is a `start` naming the approval it used (`approval`), so one yes lets one send
// through and a body that differs asks again.
//
// Starts are read off the browser's network events (Playwright's request events, which are Chromium's CDP Network
// events); under interception (the URL policy's, or the hold-back's) the start is written in the route handler, before
// the request leaves the browser. Pure parts (the line shapes, which entries are in doubt, previews) are exported for
// tests; the store the lines go to is the caller's (a sink).
import { createHash } from 'node:crypto';
import type { BrowserContext, Request, Route } from 'playwright';
import type { ApprovalRule } from '../contract/approvals';
import { holdingRule } from './approval-gate';

/** What Playwright's `serviceWorkers: 'block'` does, for a context created without it. */
const BLOCK_SERVICE_WORKERS =
  'if (self.ServiceWorkerContainer) ServiceWorkerContainer.prototype.register = async () => undefined;';

/** The journal's file in a run (one JSON line per record). */
export const REQUEST_JOURNAL_FILE = 'requests.jsonl';

/** Methods that change nothing on the server by HTTP's rules: never journaled. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);
/** Resource types a page sends on purpose: documents (form posts) and script requests. */
const CHANGING_TYPES = new Set(['document', 'xhr', 'fetch']);
/** Longest body preview kept. */
const PREVIEW_CHARS = 200;
/** Field names whose values a preview never shows. */
const SECRET_FIELD = /pass|pwd|secret|token|otp|cvc|cvv|card|iban|pin\b|auth|session|key/i;

export type JournalStart = {
  kind: 'start';
  id: string;
  method: string;
  url: string;
  resource_type: string;
  body_sha256: string;
  body_bytes: number;
  body_preview: string;
  /** sha256 of requestKey(method, URL as sent, body hash): what a resend is recognised by (the URL above may be redacted). */
  request_sha256: string;
  started_at: string;
  step: number;
  generation: number;
  /** The approval (its hold's id) this request was sent under, when an approval rule held it before. */
  approval?: string;
};
export type JournalEnd = { kind: 'end'; id: string; ended_at: string; status?: number; error?: string };
/**
 * A request that was not sent: a resend of an entry in doubt (`id` is the entry's), or a request an approval rule
 * holds for a person's yes (`approval` set; `id` is the hold's own).
 */
export type JournalHeld = {
  kind: 'held';
  id: string;
  at: string;
  step: number;
  generation: number;
  approval?: ApprovalHold;
};
/** What an approval rule held (approval-gate.ts): the request as the question shows it, and what identifies it. */
export type ApprovalHold = {
  label: string;
  method: string;
  url: string;
  resource_type: string;
  body_preview: string;
  request_sha256: string;
};
/** A person's decision on a hold (`id` is the hold's), keyed by the request's hash. */
export type JournalDecision = {
  kind: 'approved' | 'denied';
  id: string;
  request_sha256: string;
  at: string;
  question_id: string;
  note: string;
};
/** An entry no longer in doubt: the user was asked (`user_replied`), or the worker allows resending. */
export type JournalResolved = { kind: 'resolved'; id: string; at: string; how: 'user_replied' | 'resend_allowed' };
export type JournalLine = JournalStart | JournalEnd | JournalHeld | JournalResolved | JournalDecision;

const LINE_KINDS = ['start', 'end', 'held', 'resolved', 'approved', 'denied'];

/** Parses the journal's text; a torn or foreign line is skipped (the journal is advisory, never a task's failure). */
export function parseJournal(text: string): JournalLine[] {
  const lines: JournalLine[] = [];
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    try {
      const line = JSON.parse(raw) as Partial<JournalLine>;
      if (typeof line.id === 'string' && LINE_KINDS.includes(String(line.kind))) {
        lines.push(line as JournalLine);
      }
    } catch {
      // a line torn by a crash: skipped
    }
  }
  return lines;
}

/** Entries that started and have no recorded end and were not resolved, oldest first. */
export function inDoubt(lines: readonly JournalLine[]): JournalStart[] {
  const closed = new Set(lines.filter((l) => l.kind === 'end' || l.kind === 'resolved').map((l) => l.id));
  return lines.filter((l): l is JournalStart => l.kind === 'start' && !closed.has(l.id));
}

/** Entries in doubt whose resend was held back and not yet resolved: what a reply to the runtime's question settles. */
export function heldBack(lines: readonly JournalLine[]): JournalStart[] {
  const held = new Set(lines.filter((l) => l.kind === 'held' && !l.approval).map((l) => l.id));
  return inDoubt(lines).filter((e) => held.has(e.id));
}

/** The id of an approval of this request (its hash) that no send has used yet: one approval, one send. */
export function unusedApproval(lines: readonly JournalLine[], requestSha256: string): string | undefined {
  const used = new Set(lines.flatMap((l) => (l.kind === 'start' && l.approval ? [l.approval] : [])));
  const approval = lines.find((l) => l.kind === 'approved' && l.request_sha256 === requestSha256 && !used.has(l.id));
  return approval?.id;
}

/** Whether a request may change something on its server (and so is journaled). */
export function isChanging(method: string, resourceType: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase()) && CHANGING_TYPES.has(resourceType);
}

export function bodyHash(body: Buffer | null): string {
  return createHash('sha256')
    .update(body ?? Buffer.alloc(0))
    .digest('hex');
}

/** What identifies a resend: the same method, URL and body (a hash of the three). */
export function requestKey(method: string, url: string, body: Buffer | null): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()} ${url} ${bodyHash(body)}`)
    .digest('hex');
}

/**
 * A short, readable preview of a body: form and JSON fields with password-like names shown as `***`, then every
 * known secret value replaced by `redact`, then cut to PREVIEW_CHARS.
 */
export function bodyPreview(body: Buffer | null, contentType: string, redact: (text: string) => string): string {
  if (!body || body.length === 0) return '';
  const text = body.toString('utf8');
  let shown = text;
  if (/application\/x-www-form-urlencoded/i.test(contentType)) {
    const params = new URLSearchParams(text);
    shown = [...params].map(([k, v]) => `${k}=${SECRET_FIELD.test(k) ? '***' : v}`).join('&');
  } else if (/json/i.test(contentType)) {
    try {
      shown = JSON.stringify(JSON.parse(text), (k, v: unknown) => (k && SECRET_FIELD.test(k) ? '***' : v));
    } catch {
      // not JSON after all: shown as text
    }
  } else if (/multipart\/form-data/i.test(contentType)) {
    shown = '(multipart form data)';
  } else if (!/^text\/|xml|javascript/i.test(contentType) && hasControlBytes(body)) {
    shown = `(${body.length} bytes of binary data)`;
  }
  const redacted = redact(shown);
  return redacted.length > PREVIEW_CHARS ? `${redacted.slice(0, PREVIEW_CHARS)}…` : redacted;
}

/** Bytes below 0x20 other than tab, newline, form feed and carriage return: binary data, not text. */
function hasControlBytes(body: Buffer): boolean {
  return body.subarray(0, 512).some((b) => b < 0x20 && ![0x09, 0x0a, 0x0c, 0x0d].includes(b));
}

/** The step an act is at, stamped on what the journal writes. */
export type JournalStamp = { step: number; generation: number };

export type RequestJournalOptions = {
  /** Writes one line durably (the run store); a failure is reported to `onError`, never the page's. */
  append: (line: JournalLine) => Promise<void>;
  /** The journal as the store has it now (read when a request matches an entry in doubt: was it resolved since?). */
  read: () => Promise<JournalLine[]>;
  /** Entries in doubt when the session opened. */
  inDoubt: readonly JournalStart[];
  /** Let a resend of an entry in doubt go (worker setting); it is journaled as resolved then. */
  allowResend: boolean;
  /** Route every request, so each entry is written before its request leaves (worker setting journalBeforeSend). */
  beforeSend?: boolean;
  /** Replaces known secret values in a URL or preview. */
  redact: (text: string) => string;
  /** Approval rules (approval-gate.ts): a matching request is held, unsent, until a person approves it. */
  approvals?: readonly ApprovalRule[];
  /** Unique per session: entry ids are `<prefix>-<n>`. */
  idPrefix: string;
  onError?: (err: unknown) => void;
};

/** A resend that was not sent, as the act reports it. */
export type HeldRequest = { entry: JournalStart; heldAt: string };
/** A resend that went, because the worker allows it. */
export type ResentRequest = { entry: JournalStart; resentAt: string };

export class RequestJournal {
  private stamp: JournalStamp = { step: 0, generation: 0 };
  private counter = 0;
  /** Each journaled request's entry (its start written, or being written). */
  private readonly entries = new Map<Request, Promise<JournalStart>>();
  /** Requests whose end was journaled. */
  private readonly ended = new WeakSet<Request>();
  /** Entries in doubt still unresolved, by request_sha256. */
  private readonly doubts = new Map<string, JournalStart>();
  private held: HeldRequest[] = [];
  /** Requests approval rules held since the last takeApprovalHolds. */
  private approvalHolds: JournalHeld[] = [];
  private resent: ResentRequest[] = [];
  private intercepting = false;
  /** The approval gate decides one request at a time (an approval is used once). */
  private gateQueue: Promise<unknown> = Promise.resolve();
  /** Lines are appended one after another, in order. */
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly options: RequestJournalOptions) {
    for (const entry of options.inDoubt) {
      this.doubts.set(entry.request_sha256, entry);
    }
  }

  /** The entries in doubt when the session opened. */
  get inDoubtAtOpen(): readonly JournalStart[] {
    return this.options.inDoubt;
  }

  /** The act under way: what the next entries are stamped with. */
  setStep(stamp: JournalStamp): void {
    this.stamp = stamp;
  }

  /**
   * Starts journaling the context's requests; `intercepting`: the URL policy routes every request (the start is then
   * written before the request leaves). With entries in doubt the journal routes them itself, to hold resends back.
   */
  async attach(context: BrowserContext, intercepting: boolean): Promise<void> {
    const gating = (this.options.approvals?.length ?? 0) > 0;
    this.intercepting = intercepting || this.options.beforeSend === true || this.doubts.size > 0 || gating;
    // A service worker's requests and the navigations it answers pass no route: none may register where rules hold.
    if (gating) await context.addInitScript({ content: BLOCK_SERVICE_WORKERS });
    context.on('request', (request) => {
      if (!this.intercepting) void this.startOf(request);
    });
    context.on('response', (response) => this.end(response.request(), { status: response.status() }));
    context.on('requestfailed', (request) => this.end(request, { error: request.failure()?.errorText ?? 'failed' }));
    // Registered after the policy's route, so it runs first and falls back to it.
    if (this.intercepting) await context.route('**/*', (route) => this.route(route));
  }

  /** Resends held back since the last call. */
  takeHeld(): HeldRequest[] {
    return this.held.splice(0);
  }

  /** Requests approval rules held since the last call (each journaled as a `held` line with `approval`). */
  takeApprovalHolds(): JournalHeld[] {
    return this.approvalHolds.splice(0);
  }

  /** Resends let through (the worker allows it) since the last call. */
  takeResent(): ResentRequest[] {
    return this.resent.splice(0);
  }

  /** Waits until every line written so far is in the store. */
  flush(): Promise<void> {
    return this.queue;
  }

  private async route(route: Route): Promise<void> {
    const request = route.request();
    // A tab's own navigation is cancelled (it stays on its page); a script's request fails as blocked.
    const abort = () => route.abort(request.resourceType() === 'document' ? 'aborted' : 'blockedbyclient');
    try {
      const rule = holdingRule(this.options.approvals ?? [], request.method(), request.url(), request.resourceType());
      if (!rule && !isChanging(request.method(), request.resourceType())) return await route.fallback();
      const key = requestKey(request.method(), request.url(), request.postDataBuffer());
      const doubt = this.doubts.get(key);
      if (doubt && !(await this.settled(doubt, key))) {
        const at = new Date().toISOString();
        this.held.push({ entry: doubt, heldAt: at });
        void this.write({ kind: 'held', id: doubt.id, at, ...this.stamp });
        return await abort();
      }
      // A request a rule holds is not sent when its approval cannot be read: the gate fails closed.
      const approval = rule ? await this.gated(() => this.gate(request, rule, key)) : undefined;
      if (approval === null) return await abort();
      await this.startOf(request, approval);
      await this.flush(); // the start is in the store before the request leaves
      await route.fallback();
    } catch (err) {
      this.options.onError?.(err);
      await route.fallback().catch(() => undefined);
    }
  }

  /**
   * The say of the rule that holds a request: the id of the unused approval it goes under, or null when it is held
   * (journaled as `held`, never as a start: it was not sent).
   */
  private async gate(request: Request, rule: ApprovalRule, key: string): Promise<string | null> {
    const approval = unusedApproval(await this.options.read(), key);
    if (approval) {
      await this.startOf(request, approval); // the approval is used before another request may look for one
      await this.flush();
      return approval;
    }
    const body = request.postDataBuffer();
    const { redact } = this.options;
    const hold: JournalHeld = {
      kind: 'held',
      id: `${this.options.idPrefix}-${++this.counter}`,
      at: new Date().toISOString(),
      ...this.stamp,
      approval: {
        label: rule.label,
        method: request.method(),
        url: redact(request.url()),
        resource_type: request.resourceType(),
        body_preview: bodyPreview(body, request.headers()['content-type'] ?? '', redact),
        request_sha256: key,
      },
    };
    this.approvalHolds.push(hold);
    await this.write(hold);
    return null;
  }

  /** Runs the gate's decisions one at a time; a decision that fails holds the request (null). */
  private gated(decide: () => Promise<string | null>): Promise<string | null> {
    const decided = this.gateQueue.then(decide).catch((err: unknown) => {
      this.options.onError?.(err);
      return null;
    });
    this.gateQueue = decided;
    return decided;
  }

  /** Whether an entry in doubt may be sent again: resolved since (the user replied), or the worker allows resends. */
  private async settled(doubt: JournalStart, key: string): Promise<boolean> {
    const lines = await this.options.read().catch(() => [] as JournalLine[]);
    if (lines.some((l) => l.kind === 'resolved' && l.id === doubt.id)) {
      this.doubts.delete(key);
      return true;
    }
    if (!this.options.allowResend) return false;
    const at = new Date().toISOString();
    this.doubts.delete(key);
    this.resent.push({ entry: doubt, resentAt: at });
    void this.write({ kind: 'resolved', id: doubt.id, at, how: 'resend_allowed' });
    return true;
  }

  /** The request's entry, its start written once (by whichever of the event and the route sees it first). */
  private startOf(request: Request, approval?: string): Promise<JournalStart> | undefined {
    if (!isChanging(request.method(), request.resourceType()) && approval === undefined) return undefined;
    const known = this.entries.get(request);
    if (known) return known;
    const body = request.postDataBuffer();
    const { redact } = this.options;
    const entry: JournalStart = {
      kind: 'start',
      id: `${this.options.idPrefix}-${++this.counter}`,
      method: request.method(),
      url: redact(request.url()),
      resource_type: request.resourceType(),
      body_sha256: bodyHash(body),
      body_bytes: body?.length ?? 0,
      body_preview: bodyPreview(body, request.headers()['content-type'] ?? '', redact),
      request_sha256: requestKey(request.method(), request.url(), body),
      started_at: new Date().toISOString(),
      ...this.stamp,
      ...(approval ? { approval } : {}),
    };
    const written = this.write(entry).then(() => entry);
    this.entries.set(request, written);
    return written;
  }

  private end(request: Request, how: { status?: number; error?: string }): void {
    const started = this.entries.get(request);
    if (!started || this.ended.has(request)) return;
    this.ended.add(request);
    void started.then((entry) => this.write({ kind: 'end', id: entry.id, ended_at: new Date().toISOString(), ...how }));
  }

  private write(line: JournalLine): Promise<void> {
    this.queue = this.queue.then(() => this.options.append(line).catch((err: unknown) => this.options.onError?.(err)));
    return this.queue;
  }
}
