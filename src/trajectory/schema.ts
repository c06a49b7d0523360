// Zod schemas and types of the Fara DataPoint format: the run folder's field-level contract
// (docs/architecture.md#the-run-folder-format).
//
// Read side is tolerant, as the original pydantic reader is: unknown fields are kept (loose objects), and fields the
// original fills with a default (empty strings, empty lists, null) get the same default here. What is enforced:
// the discriminators (`type`, `observation_type`, `result_type`), the enum values, the types of every field, and the
// identity fields we rely on (`id`, `timestamp` of events; `task_id`, `instruction`; `verifier_name`).
// Every parsed object has all fields filled in, so what we write back is always complete.
//
// Note: CONVENTIONS asks for strict objects; here tolerance is the contract (the original writes extra fields, and
// richer verifiers add their own), so these schemas are loose on purpose.
import { z } from 'zod';

const jsonObject = z.record(z.string(), z.unknown());
const text = z.string().default('');

// ---------- task ----------

export const TaskSchema = z.looseObject({
  task_id: z.string().min(1),
  instruction: z.string(),
  images: z.array(z.string()).default([]),
  environment_config: jsonObject.default({}),
  solver: z.looseObject({ hints: z.string().nullable().default(null) }).prefault({}),
  verifier: z
    .looseObject({ hints: z.string().nullable().default(null), config: z.array(jsonObject).default([]) })
    .prefault({}),
  metadata: jsonObject.default({}),
});
export type Task = z.infer<typeof TaskSchema>;
export type TaskInput = z.input<typeof TaskSchema>;

// ---------- observations ----------

export const USER_MESSAGE_TYPES = ['task', 'followup_task', 'critical_point_response', 'retry_feedback'] as const;
export const UserMessageTypeSchema = z.enum(USER_MESSAGE_TYPES);
export type UserMessageType = z.infer<typeof UserMessageTypeSchema>;

const observationCommon = {
  type: z.literal('observation'),
  id: z.string().min(1),
  metadata: jsonObject.default({}),
  timestamp: z.string().min(1),
  /** null: observed before an action; set: observed after that action. */
  action_id: z.string().nullable().default(null),
};

export const EnvironmentObservationSchema = z.looseObject({
  ...observationCommon,
  observation_type: z.literal('environment'),
  /** Relative to the run folder, e.g. `screenshot_3_pre.png`; '' when no screenshot was taken. */
  screenshot_path: text,
  url: text,
  page_info: text,
});
export type EnvironmentObservation = z.infer<typeof EnvironmentObservationSchema>;

export const ToolOutputObservationSchema = z.looseObject({
  ...observationCommon,
  observation_type: z.literal('tool_output'),
  output: text,
  /** '' when the action succeeded (the original reader wants a string, never null). */
  error: text,
});
export type ToolOutputObservation = z.infer<typeof ToolOutputObservationSchema>;

export const UserMessageObservationSchema = z.looseObject({
  ...observationCommon,
  observation_type: z.literal('user_message'),
  content: z.string(),
  message_type: UserMessageTypeSchema.default('task'),
});
export type UserMessageObservation = z.infer<typeof UserMessageObservationSchema>;

export const ObservationSchema = z.discriminatedUnion('observation_type', [
  EnvironmentObservationSchema,
  ToolOutputObservationSchema,
  UserMessageObservationSchema,
]);
export type Observation = z.infer<typeof ObservationSchema>;

// ---------- action ----------

export const LlmUsageSchema = z.looseObject({
  prompt_tokens: z.number().int().default(0),
  completion_tokens: z.number().int().default(0),
  reasoning_tokens: z.number().int().default(0),
  /** Prompt tokens the endpoint served from its cache (our extra field; absent in the original's runs). */
  cached_tokens: z.number().int().optional().catch(undefined),
  /** The endpoint sent no usage: the counts are estimates (our extra field). */
  estimated: z.boolean().optional().catch(undefined),
  /** What the call cost in US dollars, from the endpoint's configured price (our extra field). */
  cost_usd: z.number().optional().catch(undefined),
});

export const LlmMessageSchema = z.looseObject({
  /** The model's output, word for word (training data needs the exact text). */
  raw_response: text,
  reasoning: text,
  finish_reason: text,
  usage: LlmUsageSchema.prefault({}),
});
export type LlmMessage = z.infer<typeof LlmMessageSchema>;

export const LlmConversationSchema = z.looseObject({ messages: z.array(LlmMessageSchema).default([]) });
export type LlmConversation = z.infer<typeof LlmConversationSchema>;

export const AgentStateSchema = z.looseObject({
  agent: text,
  tools_available: z.array(z.string()).default([]),
  plan: z.array(jsonObject).default([]),
  facts: z.array(z.string()).default([]),
});
export type AgentState = z.infer<typeof AgentStateSchema>;

export const ActionContentSchema = z.looseObject({
  action: z.string(),
  /** The action's arguments; the model's thoughts ride here too (`thoughts`). */
  arguments: jsonObject.default({}),
});
export type ActionContent = z.infer<typeof ActionContentSchema>;

/**
 * A model call made inside a tool (read_page_answer_question's question about the page), one entry of an action's
 * `tool_sub_calls`: which model, how big the prompt was, what it returned (or the error), how long it took. `messages`
 * is the call in the shape of `llm_conversation` (usage included). Read leniently: any field may be missing.
 */
export const ToolSubCallSchema = z.looseObject({
  tool: text,
  model: text,
  /** Characters of the prompt's messages. */
  prompt_chars: z.number().nonnegative().catch(0).default(0),
  /** Characters of the page's text before it was cut for the prompt. */
  page_chars: z.number().nonnegative().optional().catch(undefined),
  duration_ms: z.number().nonnegative().catch(0).default(0),
  /** The model's output (a run-folder field: `reply` is a wire name, kept so recorded runs read the same). */
  reply: text,
  /** '' when the call answered. */
  error: text,
  messages: z.array(LlmMessageSchema).catch([]).default([]),
});
export type ToolSubCall = z.infer<typeof ToolSubCallSchema>;
export type ToolSubCallInput = z.input<typeof ToolSubCallSchema>;

export const ActionSchema = z.looseObject({
  type: z.literal('action'),
  id: z.string().min(1),
  timestamp: z.string().min(1),
  action_name: z.string(),
  content: ActionContentSchema,
  action_nl_description: text,
  agent_state: AgentStateSchema.prefault({}),
  llm_conversation: LlmConversationSchema.prefault({}),
  grounding: LlmConversationSchema.nullable().default(null),
  /**
   * Model calls made inside the action's tool (ToolSubCallSchema entries, ours). The original writes the field too,
   * as a list whose entries we do not interpret here: any list is kept as it is; a folder without it loads the same.
   */
  tool_sub_calls: z.array(z.unknown()).optional(),
});
export type Action = z.infer<typeof ActionSchema>;

// ---------- events ----------

export const EventSchema = z.discriminatedUnion('type', [ObservationSchema, ActionSchema]);
export type Event = z.infer<typeof EventSchema>;
export type EventInput = z.input<typeof EventSchema>;

// ---------- solver log ----------

/**
 * Values the original readers accept in status.json / data_point.json (`max_rounds`, `timed_out`: Fara-1.5 reader
 * only). We read all of them; we never write `timed_out` (see status.ts).
 */
export const FILE_STATUSES = ['running', 'complete', 'aborted', 'waiting_for_user', 'max_rounds', 'timed_out'] as const;
export const SolverStatusSchema = z.enum(FILE_STATUSES);
export type SolverStatus = z.infer<typeof SolverStatusSchema>;

export const OutcomeSchema = z.looseObject({ answer: text });
export type Outcome = z.infer<typeof OutcomeSchema>;

/**
 * solver_log/status.json. Our own extras (`run_status`, `end_reason`, `end_detail`, `updated_at`) ride along; the
 * original drops them when it rewrites the file, so they are mirrored in `metadata.stats` too (writer.ts).
 */
export const StatusFileSchema = z.looseObject({
  status: SolverStatusSchema,
  outcome: OutcomeSchema.nullable().default(null),
});
export type StatusFile = z.infer<typeof StatusFileSchema>;

export const SolverLogSchema = z.looseObject({
  events: z.array(EventSchema).default([]),
  status: SolverStatusSchema.default('running'),
  outcome: OutcomeSchema.nullable().default(null),
});
export type SolverLog = z.infer<typeof SolverLogSchema>;

// ---------- verification ----------

export const RESULT_TYPES = [
  'base',
  'web_judge',
  'mm_rubric',
  'mm_rubric_outcome',
  'trajectory_diagnostics',
  'task_verification',
] as const;

export const VerificationResultSchema = z.looseObject({
  result_type: z.enum(RESULT_TYPES).default('base'),
  /** ≥ 0.5 counts as correct; null = not scored. */
  score: z.number().nullable().default(null),
  reasoning: z.string().nullable().default(null),
  verifier_name: z.string().min(1),
  metadata: jsonObject.default({}),
});
export type VerificationResult = z.infer<typeof VerificationResultSchema>;
export type VerificationResultInput = z.input<typeof VerificationResultSchema>;

// ---------- data point ----------

export const DataPointMetadataSchema = z.looseObject({
  stats: jsonObject.default({}),
  run_id: z.string().nullable().default(null),
  created_at: z.string().nullable().default(null),
});
export type DataPointMetadata = z.infer<typeof DataPointMetadataSchema>;

export const DataPointSchema = z.looseObject({
  task: TaskSchema,
  solver_log: SolverLogSchema.prefault({}),
  verification: z.record(z.string(), VerificationResultSchema).default({}),
  metadata: DataPointMetadataSchema.prefault({}),
});
export type DataPoint = z.infer<typeof DataPointSchema>;

/** True when a verification score counts as a success (score ≥ 0.5); undefined when unscored. */
export function isCorrect(result: Pick<VerificationResult, 'score'>): boolean | undefined {
  return result.score === null ? undefined : result.score >= 0.5;
}
