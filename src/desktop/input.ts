// Mouse and keyboard input on a session's display, sent with xdotool by the worker (outside the sandbox).
import { CoordinateOutOfRangeError } from './errors';
import { runHelper } from './exec';
import { normalizeKeys } from './keys';

export type MouseButton = 'left' | 'right' | 'middle';
export type ScrollDirection = 'up' | 'down' | 'left' | 'right';
export type Screen = { name: string; width: number; height: number };
export type TypingOptions = { chunkSize?: number; delayMs?: number };

const BUTTONS: Readonly<Record<MouseButton, string>> = { left: '1', middle: '2', right: '3' };
const WHEEL: Readonly<Record<ScrollDirection, string>> = { up: '4', down: '5', left: '6', right: '7' };
const DRAG_STEPS = 8;

/** Rounds a point to whole pixels and checks it lies on the screen. */
export function screenPoint(x: number, y: number, screen: Screen): { x: number; y: number } {
  if (!Number.isFinite(x) || !Number.isFinite(y)) {
    throw new CoordinateOutOfRangeError(`coordinates must be numbers, got (${x}, ${y})`);
  }
  const px = Math.round(x);
  const py = Math.round(y);
  if (px < 0 || py < 0 || px >= screen.width || py >= screen.height) {
    throw new CoordinateOutOfRangeError(
      `(${x}, ${y}) is outside the ${screen.width}x${screen.height} screen: x must be 0..${screen.width - 1}, ` +
        `y 0..${screen.height - 1}`,
    );
  }
  return { x: px, y: py };
}

/** Splits text into pieces of at most `size` characters without cutting a character in two. */
export function chunkText(text: string, size: number): string[] {
  const chars = Array.from(text);
  const chunks: string[] = [];
  for (let i = 0; i < chars.length; i += size) chunks.push(chars.slice(i, i + size).join(''));
  return chunks;
}

export class DesktopInput {
  constructor(
    private readonly screen: Screen,
    private readonly typing: Required<TypingOptions> = { chunkSize: 50, delayMs: 12 },
  ) {}

  async move(x: number, y: number): Promise<void> {
    const p = screenPoint(x, y, this.screen);
    await this.xdotool(['mousemove', String(p.x), String(p.y)]);
  }

  async click(x: number, y: number, button: MouseButton = 'left', count = 1): Promise<void> {
    const p = screenPoint(x, y, this.screen);
    const repeat = Math.max(1, Math.floor(count));
    await this.xdotool(['mousemove', String(p.x), String(p.y), 'click', '--repeat', String(repeat), BUTTONS[button]]);
  }

  doubleClick(x: number, y: number): Promise<void> {
    return this.click(x, y, 'left', 2);
  }

  rightClick(x: number, y: number): Promise<void> {
    return this.click(x, y, 'right', 1);
  }

  /** Presses the left button at (x1, y1), moves in a few steps to (x2, y2) and releases it there. */
  async drag(x1: number, y1: number, x2: number, y2: number): Promise<void> {
    const from = screenPoint(x1, y1, this.screen);
    const to = screenPoint(x2, y2, this.screen);
    const args = ['mousemove', String(from.x), String(from.y), 'mousedown', '1', 'sleep', '0.05'];
    for (let step = 1; step <= DRAG_STEPS; step++) {
      const x = Math.round(from.x + ((to.x - from.x) * step) / DRAG_STEPS);
      const y = Math.round(from.y + ((to.y - from.y) * step) / DRAG_STEPS);
      args.push('mousemove', String(x), String(y), 'sleep', '0.02');
    }
    args.push('mouseup', '1');
    await this.xdotool(args);
  }

  /** Turns the wheel `amount` notches at (x, y). */
  async scroll(x: number, y: number, direction: ScrollDirection, amount = 3): Promise<void> {
    const p = screenPoint(x, y, this.screen);
    const repeat = String(Math.max(1, Math.floor(amount)));
    await this.xdotool(['mousemove', String(p.x), String(p.y), 'click', '--repeat', repeat, WHEEL[direction]]);
  }

  /** Presses one or more chords, e.g. "Enter", "ctrl+s", "ctrl+a Delete" (see keys.ts for the names). */
  async key(keys: string): Promise<void> {
    await this.xdotool(['key', '--delay', '30', ...normalizeKeys(keys)]);
  }

  /** Types text in chunks; each newline is pressed as Return. */
  async type(text: string, options: TypingOptions = {}): Promise<void> {
    const chunkSize = Math.max(1, Math.floor(options.chunkSize ?? this.typing.chunkSize));
    const delayMs = Math.max(0, Math.floor(options.delayMs ?? this.typing.delayMs));
    const lines = text.split(/\r?\n/);
    for (const [index, line] of lines.entries()) {
      if (index > 0) await this.xdotool(['key', 'Return']);
      for (const chunk of chunkText(line, chunkSize)) {
        const timeoutMs = 10_000 + chunkSize * delayMs * 2;
        await this.xdotool(['type', '--delay', String(delayMs), '--', chunk], timeoutMs);
      }
    }
  }

  private async xdotool(args: string[], timeoutMs?: number): Promise<void> {
    await runHelper('xdotool', args, { display: this.screen.name, timeoutMs });
  }
}
