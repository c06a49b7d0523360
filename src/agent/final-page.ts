// Final-page probes: JavaScript expressions a task asks to have evaluated on its last page, in the live browser, just
// before the session is released at the end of the task (an evaluation's `page_js` checks need the page's state, and
// the browser is gone once the task has ended). The results are recorded in the run as final_page.json and read by the
// scorer. A probe runs in the page's own context, with no more reach than the page's scripts have (no files, no
// worker, no credentials); every configured secret value is redacted from what is recorded, so a probe cannot carry a
// typed password into the run folder. A probe that throws or takes too long is recorded as its error.

import { sleep } from '../common/sleep';
import { MAX_PROBES } from '../contract/task';

/** Where the results are kept in the run (beside task.json). */
export const FINAL_PAGE_FILE = 'final_page.json';
/** How long one probe may run (a hostile page may never settle a promise). */
export const PROBE_TIMEOUT_MS = 5000;
/** A result's JSON beyond this length is kept as a clipped preview only. */
export const MAX_RESULT_CHARS = 2000;

export interface ProbeResult {
  /** The expression as the task gave it (the scorer finds its result by it). */
  script: string;
  /** Whether it evaluated (false: it threw, timed out, or the page could not be reached). */
  ok: boolean;
  /** JavaScript truthiness of the value, taken in the page (so a value too long to keep still has one). */
  truthy: boolean;
  /** The value as JSON allows (undefined becomes null); absent when it was clipped. */
  value?: unknown;
  /** The value's JSON, clipped, when it was longer than MAX_RESULT_CHARS. */
  clipped?: string;
  error?: string;
}

export interface FinalPageRecord {
  url: string;
  recorded_at: string;
  probes: ProbeResult[];
}

/** The expression wrapped so the page reports its truthiness beside its value (a promise is awaited). */
export function probeExpression(script: string): string {
  // The newline ends a trailing `//` comment in the script before the wrapper's closing parenthesis.
  return `(async () => { const v = await (${script}\n); return { truthy: !!v, value: v === undefined ? null : v }; })()`;
}

/** What a probe records on a worker that does not run them (browser.pageProbes is off). */
export const PROBES_OFF =
  "not run: this worker does not run a task's page probes (browser.pageProbes is off; its operator turns it on, or " +
  'sets CUA_PAGE_PROBES=1, for task starters they trust)';

/** The record of probes a worker did not run: each one failed, saying why. */
export function probesNotRun(scripts: readonly string[]): ProbeResult[] {
  return scripts.slice(0, MAX_PROBES).map((script) => ({ script, ok: false, truthy: false, error: PROBES_OFF }));
}

/** Evaluates one expression in the page (the environment's `evaluate`). */
export type PageEvaluator = (expression: string) => Promise<unknown>;

/** What a probe's race yields when its time is up first. */
const TIMED_OUT = Symbol('timed out');

/**
 * Runs the probes one after another; never throws (a failure is that probe's result). `redact` scrubs secret values
 * from everything recorded: it sees the value's JSON text, so it must match a secret as JSON escapes it too.
 */
export async function runProbes(
  evaluate: PageEvaluator,
  scripts: readonly string[],
  opts: { redact: (text: string) => string; timeoutMs?: number },
): Promise<ProbeResult[]> {
  const results: ProbeResult[] = [];
  for (const script of scripts.slice(0, MAX_PROBES)) {
    const ms = opts.timeoutMs ?? PROBE_TIMEOUT_MS;
    const timer = new AbortController();
    try {
      const raced = await Promise.race([
        evaluate(probeExpression(script)),
        sleep(ms, timer.signal).then(() => TIMED_OUT),
      ]);
      if (raced === TIMED_OUT) throw new Error(`did not finish within ${ms} ms`);
      const got = raced as { truthy?: unknown; value?: unknown } | null;
      const truthy = got?.truthy === true;
      const json = opts.redact(JSON.stringify(got?.value ?? null) ?? 'null');
      let value: unknown;
      let readable = json.length <= MAX_RESULT_CHARS;
      try {
        if (readable) value = JSON.parse(json);
      } catch {
        readable = false; // a redaction inside a number, say: kept as text
      }
      results.push(
        readable
          ? { script, ok: true, truthy, value }
          : {
              script,
              ok: true,
              truthy,
              clipped: json.length > MAX_RESULT_CHARS ? `${json.slice(0, MAX_RESULT_CHARS)}…` : json,
            },
      );
    } catch (err) {
      const message = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
      results.push({ script, ok: false, truthy: false, error: opts.redact(message).slice(0, 500) });
    } finally {
      timer.abort();
    }
  }
  return results;
}
