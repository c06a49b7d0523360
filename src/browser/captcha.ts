// The captcha gate: a remote browser announces captcha solving through console messages; the agent waits
// for the gate before each step, and a timeout policy decides what a gate that never opens costs the run.
import type { ConsoleMessage, Page } from 'playwright';
import { delay } from './settle';

export const CAPTCHA_SOLVING_STARTED = 'browserbase-solving-started';
export const CAPTCHA_SOLVING_FINISHED = 'browserbase-solving-finished';

export { DEFAULT_CAPTCHA_POLICY, decideCaptchaTimeout } from '../agent/captcha-policy';
export type { CaptchaPolicy, CaptchaTimeoutDecision } from '../agent/captcha-policy';

/** After a solve finished, the gate waits this long before it waits for the page (the original's 3 s). */
export const CAPTCHA_RESUME_DELAY_MS = 3_000;

export type CaptchaGateOptions = {
  /**
   * Listen to the pages' console for the solving messages: for a browser that solves captchas (a remote one). Off,
   * the gate is always open, so a page that prints the messages cannot hold the agent.
   */
  listen: boolean;
  /** After solving finished, wait this long (default CAPTCHA_RESUME_DELAY_MS) for the redirect or reload it starts. */
  resumeDelayMs?: number;
  /** Then wait up to this long for the page's DOMContentLoaded; the gate opens either way. */
  readyCapMs: number;
};

/**
 * Open unless a solve is in progress. After a solve: `resumeDelayMs`, then DOMContentLoaded (capped), then open. A solve
 * that starts again meanwhile keeps it closed.
 */
export class CaptchaGate {
  private open = true;
  private generation = 0;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly options: CaptchaGateOptions) {}

  get isOpen(): boolean {
    return this.open;
  }

  /** Whether the gate listens to the console at all (otherwise it is always open). */
  get listens(): boolean {
    return this.options.listen;
  }

  /** Listens to a page's console for the solving messages (when the gate listens at all). */
  attach(page: Page): void {
    if (!this.options.listen) return;
    page.on('console', (message: ConsoleMessage) => this.onConsole(page, message.text()));
  }

  private onConsole(page: Page, text: string): void {
    if (text.includes(CAPTCHA_SOLVING_STARTED)) {
      this.generation += 1;
      this.open = false;
    } else if (text.includes(CAPTCHA_SOLVING_FINISHED)) {
      const generation = this.generation;
      void this.resume(page).then(() => {
        if (generation === this.generation) this.setOpen();
      });
    }
  }

  /** The wait between "solving finished" and the gate opening: the page usually navigates after a solve. */
  private async resume(page: Page): Promise<void> {
    await delay(this.options.resumeDelayMs ?? CAPTCHA_RESUME_DELAY_MS);
    await page.waitForLoadState('domcontentloaded', { timeout: this.options.readyCapMs }).catch(() => undefined);
  }

  private setOpen(): void {
    this.open = true;
    for (const wake of this.waiters) wake();
  }

  /** Resolves true when the gate is (or becomes) open, false when `timeoutMs` passes first. */
  wait(timeoutMs: number): Promise<boolean> {
    if (this.open) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = (): void => finish(true);
      const timer = setTimeout(() => finish(false), timeoutMs);
      const finish = (ok: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(ok);
      };
      this.waiters.add(wake);
    });
  }
}
