// An approval rule written on one line, as `cua run --approve-rule` takes it: `METHODS HOSTS[PATH] LABEL`, for
// example `POST shop.example,*.shop.example/checkout* payment` or `* bank.example bank`. METHODS is a comma-separated
// list of HTTP methods, or `*` for every method; HOSTS a comma-separated list of host patterns, followed directly by
// the path glob when there is one (it starts at the first `/`; it may also be its own word); LABEL the rest of the
// line. The rule is then checked as the config's rules are (approvals.ts). Pure.
import { ApprovalRuleSchema } from './approvals';
import type { ApprovalRule } from './approvals';

/** The form, as errors and the usage show it. */
export const APPROVAL_RULE_FORM = 'METHOD[,METHOD]|* HOST[,HOST][/PATH] LABEL';
/** An example, as errors show it. */
export const APPROVAL_RULE_EXAMPLE = "'POST shop.example,*.shop.example/checkout* payment'";

export type ApprovalRuleText = { ok: true; rule: ApprovalRule } | { ok: false; reason: string };

const fail = (reason: string): ApprovalRuleText => ({ ok: false, reason });

/** Reads one rule from its line; a rule that does not read, or that the schema refuses, gives the reason. */
export function parseApprovalRuleText(text: string): ApprovalRuleText {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const [methodWord, target, ...rest] = words;
  if (methodWord === undefined || target === undefined || rest.length === 0) {
    return fail('a rule needs methods (or *), hosts and a label');
  }
  if (target.includes('://')) return fail(`hosts are written without a scheme, e.g. shop.example/checkout*`);
  const at = target.indexOf('/'); // the path starts at the first slash
  const hostsText = at < 0 ? target : target.slice(0, at);
  let path = at < 0 ? undefined : target.slice(at);
  if (path === undefined && rest.length > 1 && rest[0]?.startsWith('/')) path = rest.shift();
  const hosts = hostsText.split(',');
  if (hosts.some((h) => h === '')) return fail(`name each host, comma-separated, before the path (got '${target}')`);
  const methods = methodWord === '*' ? undefined : methodWord.split(',');
  const parsed = ApprovalRuleSchema.safeParse({
    hosts,
    ...(methods ? { methods } : {}),
    ...(path !== undefined ? { path } : {}),
    label: rest.join(' '),
  });
  if (parsed.success) return { ok: true, rule: parsed.data };
  const issue = parsed.error.issues[0];
  return fail(`${issueWhere(issue?.path ?? [], { hosts, methods: methods ?? [] })}${issue?.message ?? 'not a rule'}`);
}

/** What an issue is about: `host 'x': `, `method 'x': `, `path: `, `label: `. */
function issueWhere(path: readonly PropertyKey[], given: { hosts: string[]; methods: string[] }): string {
  const [field, index] = path;
  if ((field === 'hosts' || field === 'methods') && typeof index === 'number') {
    return `${field === 'hosts' ? 'host' : 'method'} '${given[field][index] ?? ''}': `;
  }
  return field === undefined ? '' : `${String(field)}: `;
}
