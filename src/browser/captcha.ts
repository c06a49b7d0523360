// The captcha gate: a remote browser announces captcha solving through console messages; the agent waits
// for the gate before each step, and a timeout policy decides what a gate that never opens costs the run.
import type { ConsoleMessage, Page } from 'playwright';

export const CAPTCHA_SOLVING_STARTED = 'browserbase-solving-started';
export const CAPTCHA_SOLVING_FINISHED = 'browserbase-solving-finished';

export { DEFAULT_CAPTCHA_POLICY, decideCaptchaTimeout } from '../agent/captcha-policy';
export type { CaptchaPolicy, CaptchaTimeoutDecision } from '../agent/captcha-policy';

/** Open unless a solve is in progress; opens again once the page settled after the solve. */
export class CaptchaGate {
  private open = true;
  private generation = 0;
  private readonly waiters = new Set<() => void>();

  /** `afterSolve` lets the page finish the redirect/reload that usually follows a solve. */
  constructor(private readonly afterSolve: (page: Page) => Promise<unknown>) {}

  get isOpen(): boolean {
    return this.open;
  }

  /** Listens to a page's console for the solving messages. */
  attach(page: Page): void {
    page.on('console', (message: ConsoleMessage) => this.onConsole(page, message.text()));
  }

  private onConsole(page: Page, text: string): void {
    if (text.includes(CAPTCHA_SOLVING_STARTED)) {
      this.generation += 1;
      this.open = false;
    } else if (text.includes(CAPTCHA_SOLVING_FINISHED)) {
      const generation = this.generation;
      void this.afterSolve(page)
        .catch(() => undefined)
        .then(() => {
          if (generation === this.generation) this.setOpen();
        });
    }
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
