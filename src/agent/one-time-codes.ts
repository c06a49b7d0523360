// One-time codes (RFC 6238 TOTP) for secrets of kind 'totp': the seed (base32, from the config or an environment
// variable) stays with the worker; only the current code is typed, under the secret's host binding. A code is never
// typed in the last seconds of its period (the site may check it a moment later, in the next one): then the next
// code is computed and the typing waits for its period to begin. Pure: the clock is passed in. otpauth computes codes.
import { Secret, TOTP } from 'otpauth';

export const TOTP_ALGORITHMS = ['SHA1', 'SHA256', 'SHA512'] as const;
export type TotpAlgorithm = (typeof TOTP_ALGORITHMS)[number];

export interface TotpSettings {
  digits: number;
  /** Seconds one code is valid for. */
  period: number;
  algorithm: TotpAlgorithm;
}

export const TOTP_DEFAULTS: TotpSettings = { digits: 6, period: 30, algorithm: 'SHA1' };

/** A code is not typed when fewer than these seconds of its period are left. */
export const TOTP_LAST_SECONDS = 3;
/** Waited past a period's start, so a timer firing a little early still lands in the new period. */
const START_MARGIN_MS = 50;

const BASE32 = /^[A-Z2-7]+=*$/;

/** The seed as otpauth reads it: upper case, no spaces or dashes (as sites print them in groups). */
function normaliseSeed(seed: string): string {
  return seed.replace(/[\s-]/g, '').toUpperCase();
}

/** True when `seed` is base32 text (spaces, dashes and lower case allowed) of at least 80 bits. */
export function isTotpSeed(seed: string): boolean {
  const s = normaliseSeed(seed);
  return BASE32.test(s) && s.replace(/=+$/, '').length >= 16;
}

export interface TotpCode {
  code: string;
  /** How long to wait before typing it (0, or until the next period begins). */
  waitMs: number;
}

/**
 * The code to type at `nowMs`: the current one, or, in the last TOTP_LAST_SECONDS of its period, the next one with
 * the wait until its period begins. Throws on a seed that is not base32.
 */
export function totpCode(seed: string, settings: TotpSettings, nowMs: number): TotpCode {
  if (!isTotpSeed(seed)) throw new Error('the seed is not base32 text');
  const periodMs = settings.period * 1000;
  const left = periodMs - (nowMs % periodMs);
  const waitMs = left <= TOTP_LAST_SECONDS * 1000 ? left + START_MARGIN_MS : 0;
  const code = TOTP.generate({
    secret: Secret.fromBase32(normaliseSeed(seed)),
    algorithm: settings.algorithm,
    digits: settings.digits,
    period: settings.period,
    timestamp: nowMs + waitMs,
  });
  return { code, waitMs };
}
