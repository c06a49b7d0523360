// What the desktop's decide and act share of a step: the agent as `agent_state` names it, the screen size a task
// gets, and the step's first action as decide recorded it.
import { DESKTOP_TOOL_NAMES } from '../../src/desktop/agent';
import { DEFAULT_DESKTOP_SCREEN } from '../../src/contract/task';
import type { TaskInput } from '../../src/contract/task';
import { eventId } from '../../src/trajectory/ids';
import type { Event } from '../../src/trajectory/schema';
import type { StepRef } from '../../src/contract/activities';

/** The desktop agent in `agent_state`: its tools; it keeps no memorised facts. */
export const DESKTOP_AGENT = { name: 'desktop', allowedActions: DESKTOP_TOOL_NAMES };

export function desktopScreen(input: TaskInput): { width: number; height: number } {
  return input.screen ?? DEFAULT_DESKTOP_SCREEN;
}

/** The first action of a step as recorded (decide wrote it), or undefined. */
export function stepStart(events: readonly Event[], req: StepRef): Extract<Event, { type: 'action' }> | undefined {
  const id = eventId({ step: req.step, kind: 'action', generation: req.generation });
  return events.find((e): e is Extract<Event, { type: 'action' }> => e.id === id && e.type === 'action');
}
