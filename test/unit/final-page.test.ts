// Specification of final-page probes: each expression evaluated through the wrapper (here in a Node VM context that
// plays the page), its truthiness taken beside its value, long values clipped, a throwing or never-settling script
// recorded as its error, and every configured secret value redacted from what is kept.
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { knownSecretValues, redactSecrets } from '../../src/agent/secrets';
import { MAX_RESULT_CHARS, runProbes } from '../../src/agent/final-page';
import { MAX_PROBES } from '../../src/contract/task';

const page = {
  document: { title: 'Harbor View Lisbon', body: { innerText: 'Price: €120 per night' } },
  field: { value: 'hunter2"x' },
  location: { pathname: '/hotel/1' },
};
const evaluate = async (expression: string) => vm.runInNewContext(expression, { ...page, Promise, setTimeout });
const none = (text: string) => text;

describe('final-page probes', () => {
  it('records each value with its truthiness; undefined reads as null', async () => {
    const results = await runProbes(
      evaluate,
      [
        'document.title',
        "document.body.innerText.includes('€120') // a trailing comment",
        'location.pathname === "/hotel/2"',
        'document.nothing',
        'Promise.resolve({ n: [1, 2] })',
        '0',
      ],
      { redact: none },
    );
    expect(results.map(({ value, truthy, ok }) => ({ value, truthy, ok }))).toEqual([
      { value: 'Harbor View Lisbon', truthy: true, ok: true },
      { value: true, truthy: true, ok: true },
      { value: false, truthy: false, ok: true },
      { value: null, truthy: false, ok: true },
      { value: { n: [1, 2] }, truthy: true, ok: true },
      { value: 0, truthy: false, ok: true },
    ]);
    expect(results[0]?.script).toBe('document.title');
  });

  it('records a throwing script, a syntax error and a script that never settles as errors, and goes on', async () => {
    const results = await runProbes(
      evaluate,
      ['document.missing.field', 'if (', 'new Promise(() => {})', 'document.title'],
      { redact: none, timeoutMs: 200 },
    );
    expect(results.map((r) => r.ok)).toEqual([false, false, false, true]);
    expect(results[0]?.error).toMatch(/Cannot read properties of undefined/);
    expect(results[2]?.error).toBe('did not finish within 200 ms');
  });

  it('clips a long value but keeps its truthiness; runs at most MAX_PROBES', async () => {
    const [long] = await runProbes(evaluate, ["'x'.repeat(5000)"], { redact: none });
    expect(long).toMatchObject({ ok: true, truthy: true });
    expect(long).not.toHaveProperty('value');
    expect(long?.clipped).toHaveLength(MAX_RESULT_CHARS + 1);
    const many = await runProbes(
      evaluate,
      Array.from({ length: MAX_PROBES + 3 }, (_v, i) => `${i}`),
      { redact: none },
    );
    expect(many).toHaveLength(MAX_PROBES);
  });

  it('redacts every configured secret from values and errors, also as JSON escapes it', async () => {
    const secrets = knownSecretValues(
      { SHOP: { value: 'hunter2"x', hosts: ['shop.example'] }, PIN: { env: 'PIN_ENV', hosts: ['x.example'] } },
      { PIN_ENV: '4711' },
    );
    const redact = (text: string) => redactSecrets(text, secrets);
    const results = await runProbes(
      evaluate,
      ['field.value', '({ typed: field.value })', "(() => { throw new Error('pin 4711') })()", '4711'],
      { redact },
    );
    const kept = results.map(({ script: _script, ...rest }) => rest); // the scripts are the task's own text
    expect(JSON.stringify(kept)).not.toMatch(/hunter2|4711/);
    expect(results[0]?.value).toBe('[secret]');
    expect(results[1]?.value).toEqual({ typed: '[secret]' });
    expect(results[2]?.error).toMatch(/pin \[secret\]$/);
    // A redaction that leaves no JSON value (a number) is kept as text.
    expect(results[3]).toMatchObject({ ok: true, truthy: true, clipped: '[secret]' });
  });
});
