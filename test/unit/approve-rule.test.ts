// `cua run --approve-rule`: an approval rule on one line (METHODS HOSTS[PATH] LABEL) read into the rule the config's
// schema checks, one-line errors for rules that do not read, and the rules reaching the task's input
// (TaskInput.approvals) through the command, before it connects.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as ClientModule from '../../client/client';
import type { NewTask } from '../../client/client';
import { parseTask } from '../../client/client';
import { newTaskOf } from '../../client/new-task';
import { UsageError } from '../../cli/args';
import { approveRuleFlags } from '../../cli/commands/approve-rule';
import { runCommand } from '../../cli/commands/run';
import { parseApprovalRuleText } from '../../src/contract/approval-rule-text';
import { matchingRule } from '../../src/contract/approvals';

const started: NewTask[] = [];
vi.mock('../../client/client', async (original) => ({
  ...(await original<typeof ClientModule>()),
  // The command's connection: record the task and stop there (no server in a unit test).
  agentClientFor: () =>
    Promise.resolve({
      start: (task: NewTask) => {
        started.push(task);
        return Promise.reject(new Error('stopped after start'));
      },
    }),
}));

describe('an approval rule on one line', () => {
  it.each([
    [
      'POST *.shop.example/checkout* payment',
      { hosts: ['*.shop.example'], methods: ['POST'], path: '/checkout*', label: 'payment' },
    ],
    [
      'post,Put shop.example,*.shop.example /checkout* card payment',
      {
        hosts: ['shop.example', '*.shop.example'],
        methods: ['POST', 'PUT'],
        path: '/checkout*',
        label: 'card payment',
      },
    ],
    ['* bank.example bank', { hosts: ['bank.example'], label: 'bank' }],
    [
      '  DELETE   127.0.0.1:8080/items/*   removal ',
      { hosts: ['127.0.0.1:8080'], methods: ['DELETE'], path: '/items/*', label: 'removal' },
    ],
  ])('%s', (text, rule) => {
    expect(parseApprovalRuleText(text)).toEqual({ ok: true, rule });
  });

  it('holds what the config rule would hold', () => {
    const read = parseApprovalRuleText('POST shop.example,*.shop.example/checkout* payment');
    const rules = read.ok ? [read.rule] : [];
    expect(matchingRule(rules, 'POST', 'https://www.shop.example/checkout/pay')?.label).toBe('payment');
    expect(matchingRule(rules, 'POST', 'https://shop.example/checkout')?.label).toBe('payment');
    expect(matchingRule(rules, 'GET', 'https://shop.example/checkout')).toBeUndefined();
    expect(matchingRule(rules, 'POST', 'https://shop.example/cart')).toBeUndefined();
  });

  it.each([
    ['', 'a rule needs methods (or *), hosts and a label'],
    ['POST shop.example', 'a rule needs methods (or *), hosts and a label'],
    ['POST https://shop.example/checkout payment', 'hosts are written without a scheme'],
    ['POST /checkout payment', "name each host, comma-separated, before the path (got '/checkout')"],
    ['POST shop.example,,x.example payment', 'name each host'],
    ['POST sh*p.example payment', "host 'sh*p.example': a host pattern"],
    ['POST shop.example:99999/x payment', "host 'shop.example:99999': a host pattern"],
    ['PO$T shop.example payment', "method 'PO$T': an HTTP method such as POST"],
    ['POST, shop.example payment', "method '': an HTTP method such as POST"],
  ])('%j is refused: %s', (text, reason) => {
    const read = parseApprovalRuleText(text);
    expect(read.ok).toBe(false);
    expect(read.ok ? '' : read.reason).toContain(reason);
  });
});

describe('cua run --approve-rule', () => {
  afterEach(() => (started.length = 0));

  it('reaches the task input as its approvals, one rule per flag', async () => {
    const argv = [
      'Order the kettle.',
      '--approve-rule',
      'POST shop.example/checkout* payment',
      '--approve-rule=* bank.example bank',
    ];
    await expect(runCommand(argv)).rejects.toThrow('stopped after start');
    const [task] = started;
    expect(task && parseTask(task).approvals).toEqual([
      { hosts: ['shop.example'], methods: ['POST'], path: '/checkout*', label: 'payment' },
      { hosts: ['bank.example'], label: 'bank' },
    ]);
  });

  it('a rule that does not read stops the command before it connects, with one line naming it', async () => {
    const run = runCommand(['Order.', '--approve-rule', 'POST shop.example']);
    await expect(run).rejects.toThrow(UsageError);
    await expect(runCommand(['Order.', '--approve-rule', 'POST shop.example'])).rejects.toThrow(
      "--approve-rule 'POST shop.example': a rule needs methods (or *), hosts and a label " +
        "(form: METHOD[,METHOD]|* HOST[,HOST][/PATH] LABEL, e.g. 'POST shop.example,*.shop.example/checkout* payment')",
    );
    expect(started).toEqual([]);
  });

  it('is for browser tasks, and at most 50 rules', () => {
    expect(() => approveRuleFlags(['* bank.example bank'], 'desktop')).toThrow(/for browser tasks/);
    expect(() => approveRuleFlags(Array(51).fill('* bank.example bank'), undefined)).toThrow(
      /at most 50 rules, got 51/,
    );
    expect(approveRuleFlags(undefined, undefined)).toEqual({});
    const task = {
      ...newTaskOf({ id: 'a-task', instruction: 'x' }),
      ...approveRuleFlags(['* b.example b'], 'browser'),
    };
    expect(parseTask(task).approvals).toEqual([{ hosts: ['b.example'], label: 'b' }]);
  });
});
