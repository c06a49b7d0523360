// The action model's chat, rebuilt from the run's recorded events on every step, so it survives worker restarts.
// The memory is a list of labelled lines, as the original desktop agent keeps it, written in our words:
//   OBJECTIVE: the task                 (always kept)
//   THOUGHT: the screen description     (per step, from the first action's metadata.screen_description)
//   THOUGHT: the output's text          (per step, from the first action's arguments.thoughts)
//   ACTION: {"name": …, "arguments": …} (per call; none for an output recorded as `invalid_reply`)
//   OBSERVATION: the call's output, "Function not implemented." (unknown tool) or "Error executing function: …",
//                as the seed agent words them; "Error: …" after an output that called no tool
//   USER: a reply to ask_user or a follow-up task (always kept)
//   NOTE: a new sandbox was started (always kept), or feedback on an output that called no tool
// Unlike the original, whose memory grows without end, the newest steps are kept whole within a token budget and the
// older ones collapse into one `[N earlier steps omitted]` line; any single entry is cut to 4000 characters.
// Messages: system, one user message with the memory, one user message with the current screen and "What next?".
import { INVALID_OUTPUT_ACTION } from '../../agent/decision';
import type { ChatMessage } from '../../model/client';
import { estimateTextTokens, truncateObservation } from '../../model/context';
import type { Action, Event } from '../../trajectory/schema';
import { callObservation } from './tools';

export const DEFAULT_MEMORY_TOKEN_BUDGET = 24_000;
/** Longest single memory entry (an observation, a description) in characters; longer ones keep head and tail. */
export const MAX_ENTRY_CHARS = 4000;

export const MEMORY_LABELS = {
  objective: 'OBJECTIVE:',
  thought: 'THOUGHT:',
  action: 'ACTION:',
  observation: 'OBSERVATION:',
  user: 'USER:',
  note: 'NOTE:',
} as const;

export const WHAT_NEXT = 'What next?';

export interface MemoryOptions {
  system: string;
  objective: string;
  /** The vision model's description of the screen now. */
  description: string;
  /** Estimated tokens (4 characters each) for the whole prompt; default DEFAULT_MEMORY_TOKEN_BUDGET. */
  tokenBudget?: number;
}

interface Line {
  text: string;
  /** Kept even when its step is dropped (user replies, sandbox restores). */
  pinned: boolean;
}

/** One decided step (from one `environment` pre observation to the next), or the events before the first. */
type StepLines = Line[];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function entry(label: string, text: string, pinned = false): Line {
  return { text: `${label} ${truncateObservation(text.trim(), MAX_ENTRY_CHARS)}`, pinned };
}

function actionLines(action: Action): Line[] {
  const lines: Line[] = [];
  const metadata: unknown = action.metadata;
  const description = isRecord(metadata) ? metadata.screen_description : undefined;
  const { thoughts, ...args } = action.content.arguments;
  if (typeof description === 'string' && description.trim() !== '')
    lines.push(entry(MEMORY_LABELS.thought, description));
  if (typeof thoughts === 'string' && thoughts.trim() !== '') lines.push(entry(MEMORY_LABELS.thought, thoughts));
  const name = action.action_name || action.content.action;
  // An output that called no tool is recorded as an `invalid_reply` action; it gets no ACTION line (the model would
  // take it for a tool), only its thoughts and the error observation that follows.
  if (!isInvalidOutput(action)) lines.push(entry(MEMORY_LABELS.action, JSON.stringify({ name, arguments: args })));
  return lines;
}

function isInvalidOutput(action: Action): boolean {
  const metadata: unknown = action.metadata;
  const name = action.action_name || action.content.action;
  return name === INVALID_OUTPUT_ACTION || (isRecord(metadata) && metadata.invalid_reply !== undefined);
}

/** A note's or a no-call output's text: no function ran, so not the seed's `Error executing function`. */
function observationText(output: string, error: string): string {
  if (error.trim() === '') return output;
  return output.trim() === '' ? `Error: ${error}` : `Error: ${error}\n${output}`;
}

/** The events split into steps of memory lines; steps without any line are left out. */
function stepsOf(events: readonly Event[]): StepLines[] {
  const steps: StepLines[] = [];
  let step: StepLines = [];
  const noCall = new Set<string>(); // ids of outputs that called no tool: their error is no function's
  const close = () => {
    if (step.length > 0) steps.push(step);
    step = [];
  };
  for (const event of events) {
    if (event.type === 'action') {
      step.push(...actionLines(event));
      if (isInvalidOutput(event)) noCall.add(event.id);
      continue;
    }
    switch (event.observation_type) {
      case 'environment':
        if (event.action_id === null) close();
        break;
      case 'tool_output':
        if (event.action_id !== null) {
          const read = noCall.has(event.action_id) ? observationText : callObservation;
          step.push(entry(MEMORY_LABELS.observation, read(event.output, event.error)));
        } else {
          const restored = event.metadata.note === 'session_restored';
          step.push(entry(MEMORY_LABELS.note, observationText(event.output, event.error), restored));
        }
        break;
      case 'user_message':
        if (event.message_type === 'critical_point_response' || event.message_type === 'followup_task') {
          step.push(entry(MEMORY_LABELS.user, event.content, true));
        } else if (event.message_type === 'retry_feedback') step.push(entry(MEMORY_LABELS.note, event.content));
        break; // the task itself is the OBJECTIVE line
    }
  }
  close();
  return steps;
}

function cost(lines: readonly Line[]): number {
  return lines.reduce((n, l) => n + estimateTextTokens(l.text), 0);
}

/** The newest steps that fit in `available` tokens (the newest one always), and the number left out. */
function newestSteps(steps: readonly StepLines[], available: number): { kept: StepLines[]; omitted: number } {
  let used = 0;
  let first = steps.length;
  while (first > 0) {
    const step = steps[first - 1] ?? [];
    // Pinned lines are paid for up front, as they stay whether or not their step does.
    const extra = cost(step.filter((l) => !l.pinned));
    if (first < steps.length && used + extra > available) break;
    used += extra;
    first--;
  }
  return { kept: steps.slice(first), omitted: first };
}

/**
 * The memory lines within the budget: the objective, then `[N earlier steps omitted]` with the pinned lines of those
 * steps, then the newest steps whole.
 */
export function memoryLines(
  events: readonly Event[],
  opts: { objective: string; tokenBudget?: number; reserved?: number },
): string[] {
  const steps = stepsOf(events);
  const objective = entry(MEMORY_LABELS.objective, opts.objective);
  const pinned = steps.flatMap((t) => t.filter((l) => l.pinned));
  const budget = opts.tokenBudget ?? DEFAULT_MEMORY_TOKEN_BUDGET;
  const marker = estimateTextTokens('[000 earlier steps omitted]');
  const available = budget - (opts.reserved ?? 0) - cost([objective, ...pinned]) - marker;
  const { kept, omitted } = newestSteps(steps, available);
  const dropped = steps.slice(0, omitted).flatMap((t) => t.filter((l) => l.pinned));
  return [
    objective.text,
    ...(omitted > 0 ? [`[${omitted} earlier steps omitted]`] : []),
    ...dropped.map((l) => l.text),
    ...kept.flat().map((l) => l.text),
  ];
}

/** The user message holding the current screen description. */
export function currentScreenMessage(description: string): string {
  return `CURRENT SCREEN:\n${truncateObservation(description.trim(), MAX_ENTRY_CHARS)}\n\n${WHAT_NEXT}`;
}

/** The action model's messages for the next step (see the module comment). */
export function desktopMessages(events: readonly Event[], opts: MemoryOptions): ChatMessage[] {
  const current = currentScreenMessage(opts.description);
  const reserved = estimateTextTokens(opts.system) + estimateTextTokens(current);
  const lines = memoryLines(events, { objective: opts.objective, tokenBudget: opts.tokenBudget, reserved });
  return [
    { role: 'system', content: opts.system },
    { role: 'user', content: lines.join('\n') },
    { role: 'user', content: current },
  ];
}
