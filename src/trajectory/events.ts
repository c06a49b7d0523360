// Builders for every event the agent loop writes, each with its deterministic id (see ids.ts) and all fields filled.
// They are pure: the timestamp defaults to now but can be passed in.
import { eventId } from './ids';
import type {
  Action,
  ActionContent,
  AgentState,
  EnvironmentObservation,
  LlmConversation,
  ToolOutputObservation,
  UserMessageObservation,
  UserMessageType,
} from './schema';
import {
  ActionSchema,
  EnvironmentObservationSchema,
  ToolOutputObservationSchema,
  UserMessageObservationSchema,
} from './schema';

export interface Stamp {
  /** Session generation / attempt of the step (0 by default). */
  generation?: number;
  /** A desktop tool call's place in its step (action and tool events only; 0 by default). */
  call?: number;
  /** ISO time; now by default. */
  timestamp?: string;
  metadata?: Record<string, unknown>;
}

export interface PageState {
  screenshot_path?: string;
  url?: string;
  page_info?: string;
}

export interface ActionFields {
  action_name: string;
  content: { action: string; arguments?: Record<string, unknown> } & Partial<ActionContent>;
  action_nl_description?: string;
  agent_state?: Partial<AgentState>;
  llm_conversation?: Partial<LlmConversation>;
  grounding?: LlmConversation | null;
}

const common = (id: string, stamp: Stamp, actionId: string | null) => ({
  type: 'observation' as const,
  id,
  timestamp: stamp.timestamp ?? new Date().toISOString(),
  metadata: stamp.metadata ?? {},
  action_id: actionId,
});

function userMessage(id: string, content: string, messageType: UserMessageType, stamp: Stamp): UserMessageObservation {
  return UserMessageObservationSchema.parse({
    ...common(id, stamp, null),
    observation_type: 'user_message',
    content,
    message_type: messageType,
  });
}

/** The task instruction, first event of a run: `user-0000-task-g0`. */
export function taskMessage(instruction: string, stamp: Stamp = {}): UserMessageObservation {
  return userMessage(eventId({ step: 0, kind: 'task', generation: stamp.generation }), instruction, 'task', stamp);
}

/** A follow-up task given after `step`. */
export function followupMessage(step: number, content: string, stamp: Stamp = {}): UserMessageObservation {
  const id = eventId({ step, kind: 'followup', generation: stamp.generation });
  return userMessage(id, content, 'followup_task', stamp);
}

/**
 * A message said to the running task (`cua say`), read by the model with `step`'s observation: a `followup_task`
 * (none of the seed's message types means "steer") marked `metadata.kind = "steer"`; `index` is its place among the
 * step's messages (1, 2, …).
 */
export function steerMessage(step: number, content: string, index: number, stamp: Stamp = {}): UserMessageObservation {
  const id = eventId({ step, kind: 'followup', call: index });
  return userMessage(id, content, 'followup_task', { ...stamp, metadata: { kind: 'steer', ...stamp.metadata } });
}

/** What a person did while they had the browser (a takeover), read by the model with `step`'s observation. */
export function handbackEvent(step: number, output: string, stamp: Stamp = {}): ToolOutputObservation {
  return ToolOutputObservationSchema.parse({
    ...common(eventId({ step, kind: 'handback', generation: stamp.generation }), stamp, null),
    metadata: { note: 'handback', ...stamp.metadata },
    observation_type: 'tool_output',
    output,
    error: '',
  });
}

/** A note from the runtime the model reads with `step`'s observation (e.g. that it repeats itself: metadata.note "loop"). */
export function noteEvent(step: number, output: string, stamp: Stamp = {}): ToolOutputObservation {
  return ToolOutputObservationSchema.parse({
    ...common(eventId({ step, kind: 'note', generation: stamp.generation }), stamp, null),
    metadata: { ...stamp.metadata },
    observation_type: 'tool_output',
    output,
    error: '',
  });
}

/**
 * A task's structured output after its last `step` (docs/output.md): the output's JSON (or why there is none) as its
 * text, and in `metadata` the extraction's calls (`tool_sub_calls`, counted in the run's usage), `output` and
 * `output_error`. Not read by the model.
 */
export function outputEvent(
  step: number,
  record: { output: { value: unknown; partial: boolean } | null; error?: string; subCalls: unknown[] },
  stamp: Stamp = {},
): ToolOutputObservation {
  return ToolOutputObservationSchema.parse({
    ...common(eventId({ step, kind: 'output', generation: stamp.generation }), stamp, null),
    metadata: {
      note: 'output',
      output: record.output,
      ...(record.error ? { output_error: record.error } : {}),
      tool_sub_calls: record.subCalls,
      ...stamp.metadata,
    },
    observation_type: 'tool_output',
    output: record.output ? JSON.stringify(record.output.value) : '',
    error: record.error ?? '',
  });
}

/** After a scheduled run ended: its schedule's monitor notified about it (metadata.note "monitor"). */
export function monitorEvent(step: number, output: string, metadata: Record<string, unknown>): ToolOutputObservation {
  return ToolOutputObservationSchema.parse({
    ...common(eventId({ step, kind: 'monitor' }), {}, null),
    metadata: { note: 'monitor', ...metadata },
    observation_type: 'tool_output',
    output,
    error: '',
  });
}

/** The user's answer to the question asked at `step` (ask_user_question). */
export function userReply(step: number, content: string, stamp: Stamp = {}): UserMessageObservation {
  const id = eventId({ step, kind: 'reply', generation: stamp.generation, call: stamp.call });
  return userMessage(id, content, 'critical_point_response', stamp);
}

/** Feedback to the model before it retries `step` (e.g. its output could not be parsed). */
export function retryFeedback(step: number, content: string, stamp: Stamp = {}): UserMessageObservation {
  const id = eventId({ step, kind: 'feedback', generation: stamp.generation });
  return userMessage(id, content, 'retry_feedback', stamp);
}

/**
 * The note that a lost browser session was replaced and restored before `step` is observed again (generation ≥ 1).
 * A tool_output with no action_id, marked `metadata.note = "session_restored"`.
 */
export function sessionRestored(step: number, output: string, stamp: Stamp = {}): ToolOutputObservation {
  return ToolOutputObservationSchema.parse({
    ...common(eventId({ step, kind: 'restored', generation: stamp.generation }), stamp, null),
    metadata: { note: 'session_restored', ...stamp.metadata },
    observation_type: 'tool_output',
    output,
    error: '',
  });
}

/** The environment before the step's action. */
export function preObservation(step: number, page: PageState, stamp: Stamp = {}): EnvironmentObservation {
  return EnvironmentObservationSchema.parse({
    ...common(eventId({ step, kind: 'pre', generation: stamp.generation }), stamp, null),
    observation_type: 'environment',
    ...page,
  });
}

/**
 * The start page: the run's first look at its environment, before step 1 (step 0's pre observation, always
 * generation 0, so one per run). The original records it right after the task message as `screenshot_0_pre.png`.
 */
export function startObservation(
  page: PageState,
  stamp: Omit<Stamp, 'generation' | 'call'> = {},
): EnvironmentObservation {
  return preObservation(0, page, { ...stamp, generation: 0 });
}

export function actionEvent(step: number, fields: ActionFields, stamp: Stamp = {}): Action {
  return ActionSchema.parse({
    type: 'action',
    id: eventId({ step, kind: 'action', generation: stamp.generation, call: stamp.call }),
    timestamp: stamp.timestamp ?? new Date().toISOString(),
    ...(stamp.metadata ? { metadata: stamp.metadata } : {}),
    ...fields,
  });
}

/** The action's text result (`error` '' when it succeeded). */
export function toolOutput(
  step: number,
  actionId: string,
  result: { output: string; error?: string },
  stamp: Stamp = {},
): ToolOutputObservation {
  return ToolOutputObservationSchema.parse({
    ...common(eventId({ step, kind: 'tool', generation: stamp.generation, call: stamp.call }), stamp, actionId),
    observation_type: 'tool_output',
    output: result.output,
    error: result.error ?? '',
  });
}

/** The environment after the action. */
export function postObservation(
  step: number,
  actionId: string,
  page: PageState,
  stamp: Stamp = {},
): EnvironmentObservation {
  return EnvironmentObservationSchema.parse({
    ...common(eventId({ step, kind: 'post', generation: stamp.generation }), stamp, actionId),
    observation_type: 'environment',
    ...page,
  });
}

/**
 * A question the runtime asks the user after `step`'s action (not the model's: `metadata.asked_by = "runtime"`, an
 * empty llm_conversation), recorded as an ask_user_question so that the reply follows an action as usual.
 */
export function runtimeQuestion(step: number, question: string, stamp: Stamp = {}): Action {
  return ActionSchema.parse({
    type: 'action',
    id: eventId({ step, kind: 'asked', generation: stamp.generation, call: stamp.call }),
    timestamp: stamp.timestamp ?? new Date().toISOString(),
    metadata: { asked_by: 'runtime', ...stamp.metadata },
    action_name: 'ask_user_question',
    content: { action: 'ask_user_question', arguments: { question } },
    action_nl_description: `The runtime asks the user: ${question}`,
    agent_state: {},
    llm_conversation: { messages: [] },
    grounding: null,
  });
}
