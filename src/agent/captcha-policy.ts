// The captcha gate's three-level timeout policy (fail the run / go on unsolved / stop waiting for good).
// Pure, so the workflow applies it; the browser layer only reports whether the gate opened in time.
export type CaptchaPolicy = {
  /** How long one step waits for the gate. */
  waitMs: number;
  /** Level 1: the first timeout fails the run. */
  raiseOnTimeout: boolean;
  /** Level 3: after this many timeouts (when not raising) the gate is switched off for the rest of the run. */
  timeoutLimit: number;
};

export const DEFAULT_CAPTCHA_POLICY: CaptchaPolicy = { waitMs: 60_000, raiseOnTimeout: true, timeoutLimit: 2 };

/** What the run does after the gate timed out: fail, go on with the captcha unsolved, or stop waiting for good. */
export type CaptchaTimeoutDecision = 'raise' | 'continue' | 'disable-gate';

/** Pure (no I/O): the three-level policy applied to the number of timeouts so far, this one included. */
export function decideCaptchaTimeout(policy: CaptchaPolicy, timeoutsSoFar: number): CaptchaTimeoutDecision {
  if (policy.raiseOnTimeout) return 'raise';
  return timeoutsSoFar >= policy.timeoutLimit ? 'disable-gate' : 'continue';
}
