// One-time codes as a specification: RFC 6238's own test vectors, agreement with an implementation of the tests'
// own, the last-3-seconds rule on a controlled clock, and `{{totp:NAME}}` under the same host binding as any secret.
import { describe, expect, it } from 'vitest';
import { isTotpSeed, TOTP_DEFAULTS, totpCode } from '../../src/agent/one-time-codes';
import { resolveSecrets } from '../../src/agent/secrets';
import type { SecretSpecs } from '../../src/agent/secrets';
import { configFromObject } from '../../src/runtime/config';
import { secretResolver } from '../../activities/support';
import { base32Encode, rfc6238 } from '../fixtures/secrets/rfc6238';

const SHA1_SEED = base32Encode(Buffer.from('12345678901234567890'));
const SHA256_SEED = base32Encode(Buffer.from('12345678901234567890123456789012'));
const SHA512_SEED = base32Encode(Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'));

describe('totpCode', () => {
  // RFC 6238 appendix B (8 digits), at times that are not in a period's last 3 seconds.
  it.each<[number, string, string, 'SHA1' | 'SHA256' | 'SHA512']>([
    [1234567890, '89005924', SHA1_SEED, 'SHA1'],
    [1234567890, '91819424', SHA256_SEED, 'SHA256'],
    [1234567890, '93441116', SHA512_SEED, 'SHA512'],
    [2000000000, '69279037', SHA1_SEED, 'SHA1'],
    [20000000000, '77737706', SHA256_SEED, 'SHA256'],
    [20000000000, '47863826', SHA512_SEED, 'SHA512'],
  ])('at %i the code is %s (%s…, %s)', (seconds, code, seed, algorithm) => {
    expect(totpCode(seed, { digits: 8, period: 30, algorithm }, seconds * 1000)).toEqual({ code, waitMs: 0 });
  });

  it('agrees with an independent implementation over a day of periods', () => {
    const seed = 'JBSWY3DPEHPK3PXP';
    for (let t = 1_700_000_000; t < 1_700_086_400; t += 997) {
      const at = t - (t % 30) + 5; // early in its period
      expect(totpCode(seed, TOTP_DEFAULTS, at * 1000).code).toBe(rfc6238(seed, at));
    }
  });

  it.each<[string, number, number]>([
    ['27 s into the period: the next code, after 3 s (and a margin)', 27_000, 3_050],
    ['29.999 s: the next code, after 1 ms', 29_999, 51],
    ['26.999 s: still this period (3.001 s left)', 26_999, 0],
    ['0 s: this code', 0, 0],
  ])('%s', (_what, intoPeriodMs, waitMs) => {
    const seed = 'JBSWY3DPEHPK3PXP';
    const start = 1_700_000_010_000; // a period starts here (divisible by 30 000)
    const got = totpCode(seed, TOTP_DEFAULTS, start + intoPeriodMs);
    expect(got.waitMs).toBe(waitMs);
    const typedAt = (start + intoPeriodMs + got.waitMs) / 1000;
    expect(got.code).toBe(rfc6238(seed, typedAt));
    // Typed at that moment, the code has more than 3 s of its period left.
    expect(30 - (typedAt % 30)).toBeGreaterThan(3);
  });

  it("a seed that is not base32 is refused; sites' grouped, lower-case seeds are read", () => {
    expect(() => totpCode('not a seed!', TOTP_DEFAULTS, 0)).toThrow(/not base32/);
    expect(isTotpSeed('jbsw y3dp ehpk 3pxp')).toBe(true);
    expect(totpCode('jbsw y3dp ehpk 3pxp', TOTP_DEFAULTS, 5_000).code).toBe(rfc6238('JBSWY3DPEHPK3PXP', 5));
  });
});

describe('{{totp:NAME}}', () => {
  const SEED = 'JBSWY3DPEHPK3PXP';
  const secrets: SecretSpecs = {
    OTP: { kind: 'totp', value: SEED, hosts: ['login.example'] },
    OTP8: { kind: 'totp', env: 'OTP8_SEED', hosts: ['login.example'], digits: 8, period: 60, algorithm: 'SHA256' },
    PASSWORD: { value: 'pw-123', hosts: ['login.example'] },
  };
  const at = (text: string, now: number, pageUrl = 'https://login.example/2fa') =>
    resolveSecrets(text, { secrets, pageUrl, env: { OTP8_SEED: SEED }, now });

  it('types the current code on its host, never the seed', () => {
    const got = at('{{secret:PASSWORD}} {{totp:OTP}}', 1_700_000_015_000);
    expect(got).toMatchObject({ ok: true, text: `pw-123 ${rfc6238(SEED, 1_700_000_015)}`, waitMs: 0 });
    // The guard watches the password until the context closes, the code until the period after its own has ended.
    expect(got.ok && got.typed).toEqual([
      { name: 'PASSWORD', value: 'pw-123', hosts: ['login.example'] },
      { name: 'OTP', value: rfc6238(SEED, 1_700_000_015), hosts: ['login.example'], expiresAtMs: 1_700_000_070_000 },
    ]);
    expect(JSON.stringify(got)).not.toContain(SEED);
  });

  it('digits, period and algorithm come from the secret', () => {
    const got = at('{{totp:OTP8}}', 1_700_000_015_000);
    expect(got).toMatchObject({ ok: true, text: rfc6238(SEED, 1_700_000_015, 8, 60, 'sha256') });
  });

  it('in the last 3 seconds: the next code, and the wait until its period', () => {
    const got = at('{{totp:OTP}}', 1_700_000_038_500);
    expect(got).toMatchObject({ ok: true, text: rfc6238(SEED, 1_700_000_040), waitMs: 1_550 });
    expect(got.ok && got.typed[0]?.expiresAtMs).toBe(1_700_000_100_000);
  });

  it.each<[string, string, string]>([
    [
      'another host',
      '{{totp:OTP}}',
      "Refused to type secret OTP: this page's host (evil.test) is not one it may be typed on.",
    ],
    [
      'the seed as a secret',
      '{{secret:OTP}}',
      'Refused to type secret OTP: it is a one-time-code seed: type {{totp:OTP}}.',
    ],
    [
      'a password as a code',
      '{{totp:PASSWORD}}',
      'Refused to type secret PASSWORD: it is no one-time-code (totp) secret.',
    ],
  ])('refuses %s', (_what, text, refusal) => {
    const url = text === '{{totp:OTP}}' ? 'https://evil.test/' : 'https://login.example/';
    expect(at(text, 1_700_000_015_000, url)).toEqual({ ok: false, name: expect.any(String), refusal });
  });

  it('the config checks a totp seed and keeps TOTP settings to totp secrets', () => {
    const hosts = ['login.example'];
    expect(() => configFromObject({ secrets: { A: { kind: 'totp', value: 'abc!', hosts } } })).toThrow(/base32/);
    expect(() => configFromObject({ secrets: { A: { value: 'pw', digits: 8, hosts } } })).toThrow(/kind "totp" only/);
    const ok = configFromObject({ secrets: { A: { kind: 'totp', value: SEED, period: 60, hosts } } });
    expect(ok.secrets?.A).toMatchObject({ kind: 'totp', period: 60 });
  });
});

describe('the act activity waits for the next code', () => {
  const SEED = 'JBSWY3DPEHPK3PXP';
  const config = configFromObject({ secrets: { OTP: { kind: 'totp', value: SEED, hosts: ['login.example'] } } });
  const page = { url: () => 'https://login.example/2fa' };

  it.each<[string, number, number[]]>([
    ['2 s before the period ends: waits into the next one, types its code', 1_700_000_038_000, [2_050]],
    ['5 s before: types at once', 1_700_000_035_000, []],
  ])('%s', async (_what, now, waits) => {
    const slept: number[] = [];
    const clock = { now: () => now, sleep: async (ms: number) => void slept.push(ms) };
    const resolved = await secretResolver(config, page, clock)('{{totp:OTP}}');
    expect(slept).toEqual(waits);
    const typedAt = (now + (waits[0] ?? 0)) / 1000;
    expect(resolved).toMatchObject({ ok: true, text: rfc6238(SEED, typedAt) });
  });
});
