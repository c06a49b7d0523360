// Timers that keyboard input started (a search box's debounce, say), so a settle after typing waits until they have
// fired instead of for a fixed window: an init script records them in every document, and the settle reads them
// (settle.ts), with the CSS transitions and animations running then.

/** A timer set for longer than this is not a debounce (a carousel, a session warning): it is not waited for. */
export const INPUT_TIMER_CAP_MS = 1_000;

type TimerWindow = Window & { __cuaInputTimers?: Map<number, number> };

/**
 * Init script: wraps setTimeout and clearTimeout so that a timer set while a keyboard or text-input event is being
 * dispatched (microtasks of its listeners included), or from inside the callback of such a timer (a debounce that re-arms itself), is recorded with its due
 * time (epoch ms) until it fires or is cleared. Timers longer than `capMs` and all other timers are left alone. The
 * wrappers are proxies of the native functions (same name and length, native source text).
 */
export function trackInputTimersInPage(capMs: number): void {
  const w = window as unknown as TimerWindow;
  if (w.__cuaInputTimers !== undefined) return;
  const due = new Map<number, number>();
  w.__cuaInputTimers = due;
  const inputEvents = new Set([
    'keydown',
    'keypress',
    'keyup',
    'beforeinput',
    'input',
    'textInput',
    'change',
    'compositionstart',
    'compositionupdate',
    'compositionend',
  ]);
  let insideTracked = 0;
  // window.event is not set for listeners inside a shadow tree: the last input event seen on its way down (composed
  // ones reach the window) tells too, while it is being dispatched (its phase is NONE once dispatch is over).
  let composed: Event | undefined;
  const seen = (event: Event): void => void (composed = event);
  for (const type of inputEvents) window.addEventListener(type, seen, { capture: true });
  const fromInput = (): boolean => {
    if (insideTracked > 0 || (composed !== undefined && composed.eventPhase !== Event.NONE)) return true;
    const event = (window as unknown as { event?: Event }).event;
    return event !== undefined && inputEvents.has(event.type);
  };
  window.setTimeout = new Proxy(window.setTimeout, {
    apply(target, thisArg, args: unknown[]) {
      const [handler, timeout] = args;
      const ms = Math.max(0, Number(timeout) || 0);
      if (typeof handler !== 'function' || ms > capMs || !fromInput()) return Reflect.apply(target, thisArg, args);
      let id = 0;
      const tracked = function (this: unknown, ...rest: unknown[]): unknown {
        due.delete(id);
        insideTracked += 1;
        try {
          return (handler as (...a: unknown[]) => unknown).apply(this, rest);
        } finally {
          insideTracked -= 1;
        }
      };
      id = Reflect.apply(target, thisArg, [tracked, ...args.slice(1)]) as number;
      due.set(id, Date.now() + ms);
      return id;
    },
  });
  const forget: ProxyHandler<typeof window.clearTimeout> = {
    apply(target, thisArg, args: unknown[]) {
      due.delete(Number(args[0]));
      return Reflect.apply(target, thisArg, args) as unknown;
    },
  };
  window.clearTimeout = new Proxy(window.clearTimeout, forget);
  window.clearInterval = new Proxy(window.clearInterval, forget);
}

/**
 * What a document says of the input's work: when it will be over (epoch ms, 0 if nothing is pending), and whether the
 * focus is in one of its child frames (whose own work is then to be read too).
 */
export type InputWork = { due: number; focusInFrame: boolean };

/**
 * In-page: when what the input started will be over: its timers that have not run yet and, with `animations`, the
 * CSS transitions and animations running now that end within `capMs` (a menu sliding open, a focus ring fading in;
 * endless ones, like a spinner, are left out).
 */
export function inputWorkInPage([animations, capMs]: [boolean, number]): InputWork {
  const tag = document.activeElement?.tagName;
  const focusInFrame = tag === 'IFRAME' || tag === 'FRAME';
  const timers = (window as unknown as TimerWindow).__cuaInputTimers;
  let due = 0;
  for (const at of timers?.values() ?? []) due = Math.max(due, at);
  if (!animations || typeof document.getAnimations !== 'function') return { due, focusInFrame };
  const now = Date.now();
  for (const animation of document.getAnimations()) {
    if (animation.playState !== 'running') continue;
    const end = Number(animation.effect?.getComputedTiming().endTime);
    const left = (end - Number(animation.currentTime ?? 0)) / Math.abs(animation.playbackRate || 1);
    if (Number.isFinite(left) && left > 0 && left <= capMs) due = Math.max(due, now + left);
  }
  return { due, focusInFrame };
}
