// Approvals, the pure parts: rule validation and matching, which requests a rule may hold, the question's text, how
// a reply is read, and the journal's record of holds, decisions and the sends an approval was used for.
import { describe, expect, it } from 'vitest';
import {
  approvalOutcomeText,
  approvalQuestion,
  heldForApprovalText,
  readApprovalReply,
} from '../../src/agent/approvals';
import { holdingRule, isGateable } from '../../src/browser/approval-gate';
import { holdsNamed, isDecided } from '../../src/browser/approval-lines';
import { heldBack, parseJournal, unusedApproval } from '../../src/browser/request-journal';
import type { JournalLine } from '../../src/browser/request-journal';
import { ApprovalRulesSchema, matchingRule, rulesForTask } from '../../src/contract/approvals';
import type { ApprovalRule } from '../../src/contract/approvals';
import { TaskInputSchema } from '../../src/contract/task';
import { configFromObject } from '../../src/runtime/config';

const shop: ApprovalRule = {
  hosts: ['*.shop.example', 'shop.example'],
  methods: ['POST'],
  path: '/checkout*',
  label: 'payment',
};
const bank: ApprovalRule = { hosts: ['bank.example'], label: 'bank' };
const RULES = [shop, bank];

describe('approval rules', () => {
  it.each([
    ['POST', 'https://shop.example/checkout', 'payment'],
    ['post', 'https://www.shop.example/checkout/confirm?x=1', 'payment'],
    ['POST', 'https://shop.example/CHECKOUT', 'payment'],
    ['POST', 'https://shop.example/check%6Fut', 'payment'],
    ['GET', 'https://shop.example/checkout', undefined],
    ['POST', 'https://shop.example/cart', undefined],
    ['POST', 'https://evilshop.example/checkout', undefined],
    ['GET', 'https://bank.example/', 'bank'],
    ['DELETE', 'http://bank.example:8080/accounts/1', 'bank'],
    ['POST', 'https://sub.bank.example/pay', undefined],
    ['POST', 'not a url', undefined],
  ])('%s %s → %s', (method, url, label) => {
    expect(matchingRule(RULES, method, url)?.label).toBe(label);
  });

  it('a port in a host pattern matches that port only', () => {
    const rules = [{ hosts: ['127.0.0.1:8080'], label: 'local' }];
    expect(matchingRule(rules, 'POST', 'http://127.0.0.1:8080/order')?.label).toBe('local');
    expect(matchingRule(rules, 'POST', 'http://127.0.0.1:8081/order')).toBeUndefined();
  });

  it('a glob ? is one character', () => {
    const rules = [{ hosts: ['a.example'], path: '/v?/pay', label: 'pay' }];
    expect(matchingRule(rules, 'POST', 'https://a.example/v2/pay')?.label).toBe('pay');
    expect(matchingRule(rules, 'POST', 'https://a.example/v22/pay')).toBeUndefined();
  });

  it('methods are upper-cased; bad rules are refused with a clear message', () => {
    expect(ApprovalRulesSchema.parse([{ hosts: ['a.example'], methods: ['post'], label: 'x' }])[0]?.methods).toEqual([
      'POST',
    ]);
    const bad = (rule: unknown) => ApprovalRulesSchema.safeParse([rule]).error?.issues.map((i) => i.message);
    expect(bad({ hosts: ['http://a.example/'], label: 'x' })).toEqual([
      'a host pattern: example.com, *.example.com or host:port',
    ]);
    expect(bad({ hosts: [], label: 'x' })).toEqual(['a rule needs at least one host']);
    expect(bad({ hosts: ['a.example'], path: 'checkout', label: 'x' })).toEqual([
      'a path glob starts with /, e.g. /checkout*',
    ]);
    expect(bad({ hosts: ['a.example'], label: ' ' })).toEqual(['a rule needs a label, e.g. "payment"']);
    expect(bad({ hosts: ['a.example'], methods: ['PO ST'], label: 'x' })).toEqual(['an HTTP method such as POST']);
  });

  it('the worker config takes rules and names a bad one in one line', () => {
    expect(configFromObject({ approvals: [shop] }).approvals).toEqual([shop]);
    expect(() => configFromObject({ approvals: [{ hosts: ['a.example'] }] })).toThrow(
      /^invalid configuration: approvals\.0\.label: /,
    );
  });

  it('a task adds rules to the worker’s and cannot remove them', () => {
    const input = TaskInputSchema.parse({ runId: 't1', instruction: 'x', approvals: [bank] });
    expect(rulesForTask([shop], input.approvals)).toEqual([shop, bank]);
    expect(rulesForTask([shop], [])).toEqual([shop]);
    expect(rulesForTask(undefined, undefined)).toEqual([]);
    expect(TaskInputSchema.safeParse({ runId: 't1', instruction: 'x', approvals: [{ hosts: [] }] }).success).toBe(
      false,
    );
  });
});

describe('which requests a rule may hold', () => {
  it.each([
    ['POST', 'document', true],
    ['GET', 'document', true],
    ['POST', 'fetch', true],
    ['GET', 'xhr', true],
    ['POST', 'ping', true],
    ['GET', 'image', false],
    ['GET', 'script', false],
    ['POST', 'other', true],
    ['OPTIONS', 'fetch', false],
  ])('%s %s → %s', (method, type, gated) => {
    expect(isGateable(method, type)).toBe(gated);
  });

  it('a GET image from a held host loads; a fetch to it is held', () => {
    expect(holdingRule(RULES, 'GET', 'https://bank.example/logo.png', 'image')).toBeUndefined();
    expect(holdingRule(RULES, 'GET', 'https://bank.example/api', 'fetch')?.label).toBe('bank');
    expect(holdingRule([], 'POST', 'https://bank.example/api', 'fetch')).toBeUndefined();
  });
});

describe('the question and the reply', () => {
  const held = { method: 'POST', url: 'https://shop.example/checkout', label: 'payment', fields: 'qty=3&card=***' };

  it('asks what is about to be sent, with its fields blanked', () => {
    expect(approvalQuestion([held])).toBe(
      'The agent is about to send POST /checkout to shop.example (label: payment). Fields: qty=3&card=***. ' +
        'Approve? Reply yes or no, with a note if you like.',
    );
    expect(approvalQuestion([held, { ...held, fields: '' }])).toMatch(
      /^The agent is about to send 2 requests: \(1\) POST .* \(2\) POST \/checkout to shop.example \(label: payment\)\. No fields\. Approve\?/,
    );
    expect(heldForApprovalText([held])).toMatch(
      /^Not sent yet: POST \/checkout to shop.example \(label: payment\) needs/,
    );
  });

  it.each([
    ['yes', 'approved', ''],
    ['Yes, go ahead.', 'approved', 'go ahead.'],
    ['y', 'approved', ''],
    ['OK', 'approved', ''],
    ['approve - once only', 'approved', 'once only'],
    ['no', 'denied', ''],
    ['No: too expensive', 'denied', 'too expensive'],
    ['deny', 'denied', ''],
  ])('%j → %s', (text, decision, note) => {
    expect(readApprovalReply(text)).toEqual({ ok: true, decision, note });
  });

  it.each(['maybe', 'not yet', 'yesterday', '', '👍', 'sure'])('%j is refused: only an explicit yes or no', (text) => {
    expect(readApprovalReply(text)).toMatchObject({ ok: false, reason: expect.stringMatching(/reply yes or no/) });
  });

  it('the model reads the decision', () => {
    expect(approvalOutcomeText('approved', '')).toMatch(/send the same request again .* it will go through, once/);
    expect(approvalOutcomeText('denied', 'too expensive')).toBe(
      'The person said no: too expensive. The request was not sent; do not send it again.',
    );
  });
});

describe('the journal of approvals', () => {
  const hold = (id: string, sha: string): JournalLine => ({
    kind: 'held',
    id,
    at: '2026-01-01T00:00:00.000Z',
    step: 2,
    generation: 0,
    approval: {
      label: 'payment',
      method: 'POST',
      url: 'u',
      resource_type: 'document',
      body_preview: '',
      request_sha256: sha,
    },
  });
  const decided = (kind: 'approved' | 'denied', id: string, sha: string): JournalLine => ({
    kind,
    id,
    request_sha256: sha,
    at: '2026-01-01T00:00:01.000Z',
    question_id: 'q1',
    note: '',
  });
  const sent = (approval: string, sha: string): JournalLine => ({
    kind: 'start',
    id: `s-${approval}`,
    method: 'POST',
    url: 'u',
    resource_type: 'document',
    body_sha256: 'b',
    body_bytes: 1,
    body_preview: '',
    request_sha256: sha,
    started_at: '2026-01-01T00:00:02.000Z',
    step: 3,
    generation: 0,
    approval,
  });

  it('one approval lets one send through; a second send needs another approval', () => {
    const lines = [hold('h1', 'A'), decided('approved', 'h1', 'A')];
    expect(unusedApproval(lines, 'A')).toBe('h1');
    expect(unusedApproval(lines, 'B')).toBeUndefined(); // another body: another request
    expect(unusedApproval([...lines, sent('h1', 'A')], 'A')).toBeUndefined();
    expect(unusedApproval([hold('h1', 'A'), decided('denied', 'h1', 'A')], 'A')).toBeUndefined();
  });

  it('reads the new lines back; a hold for approval is no held-back resend', () => {
    const lines = [hold('h1', 'A'), decided('approved', 'h1', 'A'), sent('h1', 'A')];
    const text = lines.map((l) => JSON.stringify(l)).join('\n');
    expect(parseJournal(text)).toEqual(lines);
    expect(heldBack(lines)).toEqual([]);
    expect(holdsNamed(lines, ['h1']).map((h) => h.id)).toEqual(['h1']);
    expect(isDecided(lines, 'h1')).toBe(true);
    expect(isDecided(lines, 'h2')).toBe(false);
  });
});
