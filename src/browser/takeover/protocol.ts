// The takeover endpoint's messages over its WebSocket: what a viewer sends (input events, checked here) and what the
// server sends back (screencast frames, each input's answer, the URL policy's refusals, the lease's end). One module
// for the server, the viewer page and tests.
import { z } from 'zod';

/** An input's own id, echoed in its answer so a viewer knows when it was carried out. */
const InputId = z.union([z.string().max(64), z.number().int()]).optional();
/** Viewport CSS pixels; generous bounds, only to keep nonsense out. */
const Pixel = z.number().finite().min(-100_000).max(100_000);

export const MouseInputSchema = z.strictObject({
  type: z.literal('mouse'),
  action: z.enum(['move', 'down', 'up', 'wheel']),
  x: Pixel,
  y: Pixel,
  button: z.enum(['left', 'right', 'middle']).optional(),
  /** A double click is a second down/up with clickCount 2 (the viewer passes the DOM event's `detail`). */
  clickCount: z.number().int().min(1).max(3).optional(),
  deltaX: Pixel.optional(),
  deltaY: Pixel.optional(),
  id: InputId,
});

export const KeyInputSchema = z.strictObject({
  type: z.literal('key'),
  action: z.enum(['down', 'up', 'press']),
  /** A KeyboardEvent key value or a Playwright key name: Enter, Backspace, ArrowLeft, Shift, a, … */
  key: z.string().min(1).max(64),
  id: InputId,
});

export const TextInputSchema = z.strictObject({
  type: z.literal('text'),
  text: z.string().min(1).max(10_000),
  id: InputId,
});

export const NavigateInputSchema = z.strictObject({
  type: z.literal('navigate'),
  url: z.string().min(1).max(8_192),
  id: InputId,
});

export const TakeoverInputSchema = z.discriminatedUnion('type', [
  MouseInputSchema,
  KeyInputSchema,
  TextInputSchema,
  NavigateInputSchema,
]);
export type TakeoverInput = z.infer<typeof TakeoverInputSchema>;
export type MouseInput = z.infer<typeof MouseInputSchema>;
export type KeyInput = z.infer<typeof KeyInputSchema>;

/** What the server sends a viewer, as JSON text messages. */
export type ServerMessage =
  /** A screencast frame: a JPEG (base64) of the viewport, its size in CSS pixels, and the page it shows. */
  | { type: 'frame'; data: string; width: number; height: number; url: string; title: string }
  /** The input with this id was carried out; the page's URL after it. */
  | { type: 'done'; id?: string | number; url: string }
  /** The input was not carried out (or failed): one line, e.g. `blocked by policy: file:///etc/passwd: …`. */
  | { type: 'error'; id?: string | number; message: string }
  /** The URL policy refused a page the person's input led to (a link, a form, a redirect hop). */
  | { type: 'blocked'; url: string; reason: string }
  /** The lease ended (handed back, or the session closed): the socket closes after this. */
  | { type: 'ended'; reason: string };

/** Parses one message from a viewer: its input, or a one-line reason it is none. */
export function parseInput(text: string): { ok: true; input: TakeoverInput } | { ok: false; error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, error: 'not JSON: send one input event as a JSON object' };
  }
  const parsed = TakeoverInputSchema.safeParse(raw);
  if (parsed.success) return { ok: true, input: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, error: `not an input event: ${issue?.path.join('.') || '(message)'}: ${issue?.message ?? ''}` };
}
