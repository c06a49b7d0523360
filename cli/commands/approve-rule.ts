// `cua run --approve-rule RULE` (repeatable): approval rules the task adds to the worker's, each on one line
// (src/contract/approval-rule-text.ts), e.g. `--approve-rule 'POST shop.example,*.shop.example/checkout* payment'`.
// A rule that does not read stops the command before it connects, with a one-line error naming it.
import {
  APPROVAL_RULE_EXAMPLE,
  APPROVAL_RULE_FORM,
  parseApprovalRuleText,
} from '../../src/contract/approval-rule-text';
import { MAX_TASK_APPROVAL_RULES } from '../../src/contract/approvals';
import type { ApprovalRule } from '../../src/contract/approvals';
import { UsageError } from '../args';

/** The task's `approvals` from the flag's values; none given: nothing. */
export function approveRuleFlags(
  texts: readonly string[] | undefined,
  env: string | undefined,
): { approvals?: ApprovalRule[] } {
  if (!texts?.length) return {};
  if (env !== undefined && env !== 'browser') {
    throw new UsageError('--approve-rule is for browser tasks (approval rules hold the requests of a browser)');
  }
  if (texts.length > MAX_TASK_APPROVAL_RULES) {
    throw new UsageError(
      `--approve-rule: a task may add at most ${MAX_TASK_APPROVAL_RULES} rules, got ${texts.length}`,
    );
  }
  const approvals = texts.map((text) => {
    const read = parseApprovalRuleText(text);
    if (!read.ok) {
      throw new UsageError(
        `--approve-rule '${text}': ${read.reason} (form: ${APPROVAL_RULE_FORM}, e.g. ${APPROVAL_RULE_EXAMPLE})`,
      );
    }
    return read.rule;
  });
  return { approvals };
}
