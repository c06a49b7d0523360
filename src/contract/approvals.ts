// Approval rules: requests that need a person's yes before they leave the browser (the worker config's `approvals`,
// and a task's own, which only add to the worker's). A rule names hosts (host patterns), optionally methods and a
// path glob, and a label the question shows. Pure: the schema, the glob, and which rule a request matches.
import { z } from 'zod';
import { matchesHost, parseHostPattern } from '../common/host-patterns';

/** Most rules a task may add. */
export const MAX_TASK_APPROVAL_RULES = 50;

const METHOD = /^[A-Za-z]{1,16}$/;

export const ApprovalRuleSchema = z.strictObject({
  /** Host patterns: `shop.example`, `*.shop.example` (subdomains at any depth), either with an optional `:port`. */
  hosts: z
    .array(
      z
        .string()
        .refine((h) => parseHostPattern(h) !== undefined, 'a host pattern: example.com, *.example.com or host:port'),
    )
    .min(1, 'a rule needs at least one host'),
  /** HTTP methods (any case); absent: every method. */
  methods: z
    .array(
      z
        .string()
        .regex(METHOD, 'an HTTP method such as POST')
        .transform((m) => m.toUpperCase()),
    )
    .min(1, 'methods: list at least one, or leave the field out for every method')
    .optional(),
  /** A glob on the URL's path (`*`: any characters, `/` included; `?`: one); absent: every path. */
  path: z.string().startsWith('/', 'a path glob starts with /, e.g. /checkout*').max(500).optional(),
  /** What the question calls such a request, e.g. "payment". */
  label: z.string().trim().min(1, 'a rule needs a label, e.g. "payment"').max(80),
});
export type ApprovalRule = z.infer<typeof ApprovalRuleSchema>;

export const ApprovalRulesSchema = z.array(ApprovalRuleSchema);
export const TaskApprovalRulesSchema = ApprovalRulesSchema.max(
  MAX_TASK_APPROVAL_RULES,
  `a task may add at most ${MAX_TASK_APPROVAL_RULES} approval rules`,
);

/** The rules a task's sessions enforce: the worker's, then the task's (a task adds rules; it cannot remove any). */
export function rulesForTask(
  worker: readonly ApprovalRule[] | undefined,
  task: readonly ApprovalRule[] | undefined,
): ApprovalRule[] {
  return [...(worker ?? []), ...(task ?? [])];
}

/** The glob as a regular expression over a whole path, case-insensitive. */
function globRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 'is');
}

/** A URL's path as matched: percent-decoded where that is valid (so `/check%6Fut` is `/checkout`). */
function decodedPath(url: URL): string {
  try {
    return decodeURIComponent(url.pathname);
  } catch {
    return url.pathname;
  }
}

function effectivePort(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80;
}

/** The first rule a request (method, URL) matches, or undefined. A URL that does not parse matches nothing. */
export function matchingRule(rules: readonly ApprovalRule[], method: string, rawUrl: string): ApprovalRule | undefined {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return undefined;
  }
  const verb = method.toUpperCase();
  const port = effectivePort(url);
  const host = url.hostname;
  return rules.find((rule) => {
    if (rule.methods && !rule.methods.includes(verb)) return false;
    const hostMatches = rule.hosts.some((h) => {
      const pattern = parseHostPattern(h);
      return pattern !== undefined && matchesHost(pattern, host, port);
    });
    if (!hostMatches) return false;
    return rule.path === undefined || globRegExp(rule.path).test(decodedPath(url));
  });
}
