// What a replay runs again (`cua replay`, issue 28): a recorded run's steps in order, each with the action its model
// decided (the last generation's, when a lost worker made it decide again), the pre screenshot and URL it was decided
// on, the element the act recorded it hitting (metadata.element of its tool output) and, for a question, the reply
// it got. Steps whose output was no valid action, and the runtime's own questions, are not the model's decisions:
// left out, so the replay's step k runs the recording's k-th decision. Pure: the events come in.
import { parseEventId } from '../trajectory/ids';
import type { Event } from '../trajectory/schema';

type ActionEvent = Extract<Event, { type: 'action' }>;

export interface RecordedStep {
  /** The step's number in the recorded run. */
  step: number;
  action: ActionEvent;
  /** The run-relative path of the pre screenshot it was decided on, and that page's URL. */
  preScreenshot: string | null;
  preUrl: string | null;
  /** The act's record of the element it hit (metadata.element), when there is one. */
  element: Record<string, unknown> | null;
  /** A question's reply (critical_point_response of the same step), when it got one. */
  reply: string | null;
  /** The page after it (the post observation's URL), for a final answer's check. */
  postUrl: string | null;
}

/** A string field of an event, or null. */
export function field(e: Event | undefined, key: string): string | null {
  const v = e ? (e as Record<string, unknown>)[key] : undefined;
  return typeof v === 'string' ? v : null;
}

const meta = (e: Event) => (e.metadata ?? {}) as Record<string, unknown>;

/** The recorded run's decisions, in step order (see the head of this file). */
export function recordedSteps(events: readonly Event[]): RecordedStep[] {
  const byStep = new Map<number, { generation: number; action: ActionEvent }>();
  for (const e of events) {
    if (e.type !== 'action') continue;
    const id = parseEventId(e.id);
    if (!id || id.kind !== 'action' || id.call !== undefined) continue;
    const m = meta(e);
    if (m['invalid_reply'] !== undefined || m['asked_by'] === 'runtime') continue;
    const seen = byStep.get(id.step);
    if (!seen || seen.generation <= id.generation) byStep.set(id.step, { generation: id.generation, action: e });
  }
  const of = (step: number, kind: string, generation: number) =>
    events.find((e) => {
      const id = parseEventId(e.id);
      return id?.step === step && id.kind === kind && (kind === 'reply' || id.generation === generation);
    });
  return [...byStep.entries()]
    .sort(([a], [b]) => a - b)
    .map(([step, { generation, action }]) => {
      const pre = of(step, 'pre', generation);
      const post = of(step, 'post', generation);
      const tool = of(step, 'tool', generation);
      const reply = action.action_name === 'ask_user_question' ? of(step, 'reply', 0) : undefined;
      const element = tool ? meta(tool)['element'] : undefined;
      return {
        step,
        action,
        preScreenshot: field(pre, 'screenshot_path'),
        preUrl: field(pre, 'url'),
        element: element && typeof element === 'object' ? (element as Record<string, unknown>) : null,
        reply: field(reply, 'content'),
        postUrl: field(post, 'url'),
      };
    });
}

/** A recorded URL as it would be here: `origin` maps the recording's origin to this replay's (`--url`). */
export function mapOrigin(url: string, origin: { from: string; to: string } | undefined): string {
  if (!origin || !url.startsWith(origin.from)) return url;
  return `${origin.to}${url.slice(origin.from.length)}`;
}

/** Two URLs are the same page for a replay: equal without their fragment. */
export function samePage(a: string, b: string): boolean {
  const strip = (u: string) => u.replace(/#.*$/, '');
  return strip(a) === strip(b);
}
