// Rule checks of a finished run: its answer (contains, regex, a number within a tolerance), the URL of its last page,
// a JavaScript expression's value on that page (recorded by the run before its browser was released), and the site's
// own state over HTTP. A run that did not finish (step budget, invalid outputs, no reply) scores 0
// without its rules being run: the agent failed, whatever the page shows.
import { isDeepStrictEqual } from 'node:util';
import type { FinalPageRecord } from '../agent/final-page';
import type { Check } from './task-set';

export interface RunFacts {
  /** Why the run ended (`complete` = the model terminated with an answer). */
  endReason: string;
  answer: string | null;
  finalUrl: string | null;
  /** The final page's probe results (final_page.json), or null when the run recorded none. */
  finalPage?: FinalPageRecord | null;
}

export interface CheckOutcome {
  check: string;
  passed: boolean;
  detail: string;
}

export interface RuleScore {
  /** 1 when every check passed, else 0; null when the task has no checks (nothing to score it by). */
  score: number | null;
  reasoning: string;
  checks: CheckOutcome[];
}

function describe(c: Check): string {
  switch (c.type) {
    case 'answer_contains':
      return `answer contains "${c.value}"`;
    case 'answer_regex':
      return `answer matches /${c.pattern}/${c.flags ?? ''}`;
    case 'answer_number':
      return `answer has ${c.value}${c.tolerance ? ` ± ${c.tolerance}` : ''}`;
    case 'url_matches':
      return `final URL matches /${c.pattern}/`;
    case 'page_js': {
      const script = c.script.length > 80 ? `${c.script.slice(0, 79)}…` : c.script;
      return `on the final page, ${script}${c.equals !== undefined ? ` equals ${JSON.stringify(c.equals)}` : ' is truthy'}`;
    }
    case 'http':
      return `GET ${c.url}${c.contains !== undefined ? ` contains "${c.contains}"` : ''}${c.regex ? ` matches /${c.regex}/` : ''}`;
  }
}

/** The numbers written in a text (1,234.5 and 1.234,5 style separators aside: commas are dropped). */
export function numbersIn(text: string): number[] {
  return [...text.replace(/(\d),(\d{3})\b/g, '$1$2').matchAll(/-?\d+(?:\.\d+)?/g)].map((m) => Number(m[0]));
}

export type Fetcher = (url: string) => Promise<{ status: number; body: string }>;

export const httpFetcher: Fetcher = async (url) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(15_000), redirect: 'follow' });
  return { status: res.status, body: await res.text() };
};

async function runCheck(c: Check, facts: RunFacts, fetcher: Fetcher): Promise<CheckOutcome> {
  const check = describe(c);
  const answer = facts.answer ?? '';
  switch (c.type) {
    case 'answer_contains': {
      const passed = c.case_sensitive ? answer.includes(c.value) : answer.toLowerCase().includes(c.value.toLowerCase());
      return { check, passed, detail: passed ? 'found' : 'not in the answer' };
    }
    case 'answer_regex': {
      const passed = new RegExp(c.pattern, c.flags).test(answer);
      return { check, passed, detail: passed ? 'matched' : 'no match in the answer' };
    }
    case 'answer_number': {
      const nums = numbersIn(answer);
      const hit = nums.find((n) => Math.abs(n - c.value) <= (c.tolerance ?? 0));
      return {
        check,
        passed: hit !== undefined,
        detail: hit !== undefined ? `found ${hit}` : `numbers in the answer: ${nums.join(', ') || 'none'}`,
      };
    }
    case 'url_matches': {
      const passed = facts.finalUrl !== null && new RegExp(c.pattern).test(facts.finalUrl);
      return { check, passed, detail: `final URL ${facts.finalUrl ?? '(none)'}` };
    }
    case 'page_js': {
      const probe = facts.finalPage?.probes.find((p) => p.script === c.script);
      if (!probe) {
        return {
          check,
          passed: false,
          detail: facts.finalPage
            ? 'the run did not evaluate this script'
            : 'the final page was not recorded (a lost browser, or a task that ran without this check)',
        };
      }
      if (!probe.ok) return { check, passed: false, detail: `the script failed: ${probe.error ?? 'unknown error'}` };
      const shown = probe.clipped ?? JSON.stringify(probe.value);
      const got = shown.length > 200 ? `${shown.slice(0, 199)}…` : shown;
      if (c.equals === undefined) return { check, passed: probe.truthy, detail: `returned ${got}` };
      const passed = probe.clipped === undefined && isDeepStrictEqual(probe.value, c.equals);
      return { check, passed, detail: `returned ${got}` };
    }
    case 'http': {
      let got: { status: number; body: string };
      try {
        got = await fetcher(c.url);
      } catch (err) {
        return { check, passed: false, detail: `request failed: ${(err as Error).message}` };
      }
      const want = c.status ?? 200;
      if (got.status !== want) return { check, passed: false, detail: `status ${got.status}, expected ${want}` };
      if (c.contains !== undefined && !got.body.includes(c.contains)) {
        return { check, passed: false, detail: 'text not in the response' };
      }
      if (c.regex !== undefined && !new RegExp(c.regex).test(got.body)) {
        return { check, passed: false, detail: 'no match in the response' };
      }
      return { check, passed: true, detail: `status ${got.status}` };
    }
  }
}

/** Scores a run by its task's rules; see the module comment for runs that did not finish. */
export async function scoreByRules(
  checks: Check[],
  facts: RunFacts,
  fetcher: Fetcher = httpFetcher,
): Promise<RuleScore> {
  if (facts.endReason !== 'complete') {
    return { score: 0, reasoning: `the agent did not finish the task (${facts.endReason})`, checks: [] };
  }
  if (checks.length === 0) return { score: null, reasoning: 'the task has no rule checks', checks: [] };
  const outcomes: CheckOutcome[] = [];
  for (const c of checks) outcomes.push(await runCheck(c, facts, fetcher));
  const failed = outcomes.filter((o) => !o.passed);
  return {
    score: failed.length === 0 ? 1 : 0,
    reasoning:
      failed.length === 0
        ? `all ${outcomes.length} check(s) passed`
        : failed.map((o) => `failed: ${o.check} (${o.detail})`).join('; '),
    checks: outcomes,
  };
}
