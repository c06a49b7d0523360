// A one-time-code sign-in end to end (real dev server, real Chromium, scripted model): the task types
// `{{totp:OTP}}`, the worker types the current RFC 6238 code of a seed only it holds, and a fixture site that checks
// codes with an implementation of its own signs the task in. The seed is nowhere in the run folder, the history or
// what the model was sent; on another host the code is refused like any secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskResult } from '../../src/contract/task';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { startSecretSite } from '../fixtures/secrets/sites';
import type { SecretSite } from '../fixtures/secrets/sites';
import type { Harness } from './harness';
import {
  clickField,
  historyText,
  runFolderText,
  scriptedModel,
  startScripted,
  startWorkerWith,
  terminate,
  typeAndEnter,
} from './secrets-harness';
import { useHarness } from './use-harness';

const SEED = 'KRUGKIDTMVSWIIDPMYQHI2DFEB2GK43U'; // base32, shared by the worker's config and the site only

let h: Harness;
useHarness((x) => (h = x), { worker: false });

describe('one-time codes', () => {
  let login: SecretSite;
  let other: SecretSite;
  let model: ScriptedModelServer;
  let worker: { stop(): Promise<void> };
  const queue = () => `${h.config.taskQueue}-totp`;

  beforeAll(async () => {
    [login, other] = await Promise.all([startSecretSite({ seed: SEED }), startSecretSite({ seed: SEED })]);
    model = await scriptedModel({
      'totp-sign-in': [clickField, typeAndEnter('{{totp:OTP}}'), terminate('signed in')],
      'totp-exfil': [clickField, typeAndEnter('{{totp:OTP}}'), terminate('tried')],
    });
    worker = await startWorkerWith({
      ...h.config,
      taskQueue: queue(),
      secrets: { OTP: { kind: 'totp', value: SEED, hosts: [login.host] } },
    });
  }, 90_000);

  afterAll(async () => {
    await worker?.stop();
    await Promise.all([model?.close(), login?.close(), other?.close()]);
  });

  it('signs in with the current code; the seed is recorded nowhere', async () => {
    const handle = await startScripted(h, queue(), model, 'totp-sign-in', `${login.url}/login`);
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'signed in' });
    expect(login.signIns).toHaveLength(1);
    expect(login.signIns[0]).toMatchObject({ accepted: true });
    expect(login.signIns[0]?.code).toMatch(/^\d{6}$/);

    const folder = runFolderText(h, handle.workflowId);
    expect(folder).toContain('{{totp:OTP}}');
    expect(folder).not.toContain(SEED);
    const history = await historyText(handle);
    expect(history).toContain('{{totp:OTP}}');
    expect(history).not.toContain(SEED);
    expect(model.requests.map((r) => r.allText).join('\n')).not.toContain(SEED);
  }, 90_000);

  it('the egress guard keeps the code from another host', async () => {
    const handle = await startScripted(h, queue(), model, 'totp-exfil', `${login.url}/exfil/fetch?to=${other.url}`);
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'tried' });
    const line = `the page tried to send secret OTP to ${other.host} (a request)`;
    expect(runFolderText(h, handle.workflowId)).toContain(line);
    expect(other.requests.filter((r) => r.url.startsWith('/collect'))).toEqual([]);
  }, 90_000);

  it('refuses the code on a host the secret is not bound to; nothing is typed', async () => {
    const handle = await startScripted(h, queue(), model, 'totp-sign-in', `${other.url}/login`);
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete' });
    const refusal = `Refused to type secret OTP: this page's host (${other.host}) is not one it may be typed on.`;
    expect(runFolderText(h, handle.workflowId)).toContain(refusal);
    expect(other.signIns).toEqual([]);
  }, 90_000);
});
