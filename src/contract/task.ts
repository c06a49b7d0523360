// The task contract between workflow, activities and client: task input, status, steps and result. The bottom of
// the layers: zod and pure modules, importing nothing of the project but src/common (the signal/update/query
// definitions sit one layer up, workflows/messages.ts).
import { z } from 'zod';

import { TaskApprovalRulesSchema } from './approvals';
import { END_REASONS } from './end-reason';
import { DEFAULT_TASK_QUEUE } from './queues';
import type { EndReason } from './end-reason';
import { TASK_STATES } from './task-state';
import type { TaskState } from './task-state';
import { checkUrl, narrow, TaskUrlPolicySchema, WIDEST_URL_POLICY } from './url-policy';
import { MAX_CONDITION_CHARS } from './condition';
import { compileCondition } from './condition-logic';

export const AGENT_WORKFLOW = 'agentTask';
/** The built-in environments; a worker may host more (src/environments/plugin.ts), named like `vnc` or `remote-tv`. */
export const ENVIRONMENTS = ['browser', 'desktop'] as const;
export type BuiltInEnvironment = (typeof ENVIRONMENTS)[number];
export type EnvironmentName = BuiltInEnvironment | (string & {});
/** A custom environment's name (src/environments/plugin.ts), as the task input accepts it. */
export const ENVIRONMENT_NAME = /^[a-z][a-z0-9-]{0,31}$/;
/** The desktop's screen when the task names none (the seed's sandbox size). */
export const DEFAULT_DESKTOP_SCREEN = { width: 1280, height: 800 } as const;

export { DEFAULT_TASK_QUEUE, END_REASONS, TASK_STATES };
export type { EndReason, TaskState };

/**
 * A task id: also a folder name and a Temporal workflow id. The colon is for a scheduled run, whose id Temporal makes:
 * `<schedule>-<scheduled time>`, e.g. `prices-2026-11-30T09:00:00Z`.
 */
export const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** A schedule's name (its runs' ids begin with it, its monitor is `<name>-monitor`). */
export const SCHEDULE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** How many final-page probes a task may ask for, and how long each may be (src/agent/final-page.ts). */
export const MAX_PROBES = 16;
export const MAX_PROBE_CHARS = 4000;

/** The largest output schema a task may carry, as JSON text (it rides in the task input, so in history). */
export const MAX_OUTPUT_SCHEMA_CHARS = 64 * 1024;

/** The budgets a task may have (its input's `budget`; src/agent/budget.ts keeps them). */
export const BUDGET_KINDS = ['cost', 'tokens', 'minutes'] as const;
export type BudgetKind = (typeof BUDGET_KINDS)[number];

export const ViewportSchema = z.strictObject({
  width: z.number().int().min(200).max(4096),
  height: z.number().int().min(200).max(4096),
});

export const ModelChoiceSchema = z.strictObject({
  /** Name of an endpoint in the worker's config (default: "default"). */
  endpoint: z.string().min(1).default('default'),
  /** Overrides of that endpoint, e.g. from `cua run --model-base-url … --model …`. No secrets here. */
  baseUrl: z.url({ protocol: /^https?$/, error: 'model base URL must be an http(s) URL' }).optional(),
  model: z.string().min(1).optional(),
});

/** The most steps a task takes when it names none. */
export const DEFAULT_MAX_STEPS = 30;

const TaskInputFields = z.strictObject({
  /**
   * The task id (its Temporal workflow id and its run folder's name); wire name, kept so recorded histories replay
   * and activities scheduled before an upgrade still run.
   */
  runId: z.string().regex(TASK_ID, 'task id: letters, digits, dot, dash, underscore, colon (max 128)'),
  instruction: z.string().trim().min(1, 'instruction must not be empty'),
  /**
   * A follow-up task (`cua continue`): this run goes on in the run folder of the task's earlier run (same id), after
   * its last step, with the same history and the page its last step left. `instruction` stays the task's first.
   */
  followUp: z.string().trim().min(1, 'a follow-up must not be empty').max(10_000).optional(),
  /**
   * A fork (`cua fork`): this task's run folder starts with steps 1…`step` of task `runId` (marked inherited), its
   * page (or desktop home) as that step left it, and decides step `step`+1 anew; `hint` is recorded as that step's
   * retry feedback. The source run is never changed.
   */
  forkOf: z
    .strictObject({
      /** The source task's id; wire name, kept so recorded histories replay. */
      runId: z.string().min(1).max(128),
      step: z.number().int().min(1),
      hint: z.string().trim().min(1, 'a hint must not be empty').max(10_000).optional(),
      /** A branch of best of N (`cua fork --branches K`): its parent workflow's id, and which branch of how many. */
      branch: z
        .strictObject({
          parent: z.string().min(1).max(128),
          index: z.number().int().min(1),
          of: z.number().int().min(1),
        })
        .optional(),
    })
    .optional(),
  /**
   * A replay (`cua replay`): this task runs the actions recorded by task `runId` again, step by step, each one only
   * after the live page is checked against the recording (URL, the element the action hit, the screenshot's
   * distance); a step that does not match goes to the model (or, `strict`, ends the task with end reason
   * `replay_diverged`), and the model decides every step from there. `maxDistance`: the largest screenshot distance
   * (0…1) that still matches. `answers: 'recorded'` gives a question its recorded reply instead of asking (a wire
   * name, kept so recorded histories replay: it means the recorded replies; `cua replay --replies` sets it).
   * `origin`: the recorded URLs' origin is this one here (`--url` gave another start URL).
   */
  replayOf: z
    .strictObject({
      /** The recorded task's id; wire name, kept so recorded histories replay. */
      runId: z.string().min(1).max(128),
      strict: z.boolean().optional(),
      maxDistance: z.number().min(0).max(1).optional(),
      answers: z.enum(['ask', 'recorded']).optional(),
      origin: z.strictObject({ from: z.string().min(1), to: z.string().min(1) }).optional(),
    })
    .optional(),
  /**
   * An adoption (`cua adopt <folder>`): this task takes over a run folder the original (Fara) wrote, which the task's
   * starter imported into the run store under this task's id before starting it (workers never read `folder`, the
   * path the starter named: it is recorded only). The task goes on after the folder's last step: a question the
   * folder waits on waits for its reply first; the page is reopened at the folder's last URL. `origin`: the folder's
   * URLs' origin is this one here (`cua adopt --url` moved the site to another origin).
   */
  adoptOf: z
    .strictObject({
      folder: z.string().min(1).max(4096),
      origin: z.strictObject({ from: z.string().min(1), to: z.string().min(1) }).optional(),
    })
    .optional(),
  /**
   * The action cache (`cua run --cache NAME`): a step whose page looks as one this task's earlier runs (same
   * instruction, start URL, profile, viewport and model endpoint) decided on reuses that decision without a model
   * call, when its element is still there; the model's decisions are kept for later runs (src/replay/cache.ts).
   */
  cache: z
    .strictObject({
      name: z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'cache name: letters, digits, dot, dash, underscore (max 64)'),
    })
    .optional(),
  /**
   * A scheduled run (`cua schedule create`): the schedule's name, and its monitor's condition (`--notify-when`:
   * `changed`, an expression over the output, or a JSON-logic object; src/contract/condition-logic.ts). The task's id
   * is then the one Temporal gives the run, `<name>-<scheduled time>`, and when it ends the task reports its output to
   * the schedule's monitor workflow (workflows/monitor.ts).
   */
  schedule: z
    .strictObject({
      name: z.string().regex(SCHEDULE_NAME, 'schedule name: letters, digits, dot, dash, underscore (max 64)'),
      notifyWhen: z
        .union([z.string().trim().min(1).max(MAX_CONDITION_CHARS), z.record(z.string(), z.unknown())])
        .optional(),
    })
    .optional(),
  /**
   * A saved sign-in (`cua run --signin NAME`; src/trajectory/signins.ts): the task's first session opens with its
   * cookies and storage, and the task holds the sign-in's lock (one task at a time) from before that open to its end.
   * The name only: the state stays in the run store.
   */
  signin: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'sign-in name: lower-case letters, digits, dot, dash, underscore (max 64)')
    .optional(),
  /** With `signin`: the task's last page state is saved back under the name when it ends (rotating cookies). */
  signinRefresh: z.boolean().optional(),
  startUrl: z.url().optional(),
  /** Where the agent acts: a browser (Fara's agent) or a sandboxed Linux desktop (open-computer-use's agent). */
  environment: z
    .union([
      z.enum(ENVIRONMENTS),
      z.string().regex(ENVIRONMENT_NAME, 'environment: browser, desktop, or the name of one a worker hosts'),
    ])
    .default('browser'),
  /** The desktop's screen size (environment `desktop`; the browser uses `viewport`). */
  screen: ViewportSchema.optional(),
  /**
   * The model family (src/families; the field keeps its first name, `profile`, so recorded histories replay): a
   * name, checked against the registered families when the task starts (client, `cua run`) and when a worker runs it.
   */
  profile: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'profile: the name of a model family, e.g. fara-1.5')
    .default('fara-1.5'),
  /**
   * Who the model is told it is: a registry name of the task's family (src/model/identities.ts; absent: the
   * endpoint's identity, else the family's default), checked with the family. Never a text: the worker config alone
   * may write one.
   */
  identity: z.string().min(1).max(100).optional(),
  maxSteps: z.number().int().min(1).max(10_000).default(DEFAULT_MAX_STEPS),
  imagesKept: z.number().int().min(1).max(20).default(3),
  /** Estimated-token cap for one model call (image ≈ 1500, text ≈ len/4+1); 0 = off (the default). */
  tokenBudget: z.number().int().min(0).default(0),
  viewport: ViewportSchema.default({ width: 1440, height: 900 }),
  /**
   * Reply to every question without waiting: with this text, or with `true` a standing approval (go on, making nothing
   * up; src/agent/reply.ts STANDING_APPROVAL). false or absent: questions wait for a reply.
   */
  autoReply: z.union([z.string().min(1), z.boolean()]).optional(),
  /** How long to wait for a reply to a question, in seconds (absent = forever). */
  askTimeoutSeconds: z.number().positive().optional(),
  model: ModelChoiceSchema.default({ endpoint: 'default' }),
  /** Fara's meaning: an output that is no valid action ends the task with its raw text (not fed back as an error). */
  terminateOnParseError: z.boolean().default(false),
  /**
   * The task fails after this many invalid model outputs in a row (no valid action; each is fed back as an error).
   * Wire name, kept so recorded histories replay (`cua run --max-invalid-outputs` sets it).
   */
  maxInvalidReplies: z.number().int().min(1).max(100).default(3),
  timing: z
    .strictObject({
      /**
       * How long an observe/act may wait for its session's worker before the worker counts as lost. A live worker
       * starts it within milliseconds: its session slots outnumber its sessions (src/runtime/limits.ts).
       */
      sessionScheduleToStartSeconds: z.number().positive().default(5),
      /**
       * An activity whose worker went silent this long counts as lost. Workers send a heartbeat at most every
       * 0.8 × this (the SDK's throttle) and none in an activity's first second: at 2.5 s, at most 30 a minute per
       * running activity (docs/benchmarks.md has the arithmetic for a cluster).
       */
      heartbeatSeconds: z.number().positive().default(2.5),
      modelRetryInitialSeconds: z.number().positive().default(5),
      modelRetryMaxSeconds: z.number().positive().default(60),
      modelRetryAttempts: z.number().int().min(1).default(5),
      /** While a person has the browser (a takeover), how often its worker is asked for the lease again. */
      leaseCheckSeconds: z.number().positive().default(60),
    })
    .default({
      sessionScheduleToStartSeconds: 5,
      heartbeatSeconds: 2.5,
      modelRetryInitialSeconds: 5,
      modelRetryMaxSeconds: 60,
      modelRetryAttempts: 5,
      leaseCheckSeconds: 60,
    }),
  /** The captcha gate (remote browsers that solve captchas announce it on the console; local ones never do). */
  captcha: z
    .strictObject({
      waitSeconds: z.number().min(0).default(60),
      raiseOnTimeout: z.boolean().default(true),
      timeoutLimit: z.number().int().min(1).default(2),
    })
    .default({ waitSeconds: 60, raiseOnTimeout: true, timeoutLimit: 2 }),
  /**
   * Budgets (absent: the worker's defaults, config `budget`): model cost in US dollars, tokens, and working minutes
   * (not counting waits for a person or pauses). Reaching one asks the user to go on or stop (src/agent/budget.ts).
   */
  budget: z
    .strictObject({
      maxCost: z.number().positive().optional(),
      maxTokens: z.number().int().positive().optional(),
      maxMinutes: z.number().positive().optional(),
    })
    .optional(),
  /**
   * Loop detection: the same action on an unchanged page (same URL, screenshot distance under `maxDistance`) this
   * many times in a row is a loop: the model is told; if it goes on, the user is asked.
   */
  loop: z
    .strictObject({
      repeats: z.number().int().min(2).max(100).default(3),
      maxDistance: z.number().min(0).max(1).default(0.01),
    })
    .default({ repeats: 3, maxDistance: 0.01 }),
  /** Upsert the CuaStatus/CuaStep search attributes (they must be registered on the server). */
  searchAttributes: z.boolean().default(true),
  /** Test hook: continue-as-new after this many steps in one run (absent = when Temporal suggests it). */
  continueAsNewAfterSteps: z.number().int().min(1).optional(),
  /**
   * Narrows the worker's URL policy for this task (never widens it): schemes, allowFile, allowHosts, denyHosts,
   * denyPrivateAddresses, each optional (src/contract/url-policy.ts). The start URL is checked against it here and
   * against the narrowed worker policy when the browser opens.
   */
  urlPolicy: TaskUrlPolicySchema.optional(),
  /**
   * JavaScript expressions evaluated on the browser's last page when the task ends, before the browser is released
   * (an evaluation's `page_js` checks); their results go to the run's final_page.json (src/agent/final-page.ts).
   */
  finalPageProbes: z.array(z.string().trim().min(1).max(MAX_PROBE_CHARS)).max(MAX_PROBES).optional(),
  /**
   * Approval rules this task adds to the worker's (config `approvals`; src/contract/approvals.ts): a request that
   * matches one is held before it leaves the browser until a person replies yes. A task cannot remove or loosen the
   * worker's rules.
   */
  approvals: TaskApprovalRulesSchema.optional(),
  /**
   * The output schema (a JSON Schema object; docs/output.md): when the task ends with an answer, or at its step or
   * cost budget, one extraction call turns the answer, the final page's text and the memorized facts into JSON that
   * this schema validates: the task's `output`. Checked here for its size; a validator compiles it where the task
   * starts (client) and in the worker.
   */
  outputSchema: z.record(z.string(), z.unknown()).optional(),
});
/**
 * The task input; a start URL that no worker could open for this task (javascript:, data:, …) is refused, and so is
 * an identity for the desktop. The family and its identity are checked where the families are known (see `profile`).
 */
export const TaskInputSchema = TaskInputFields.superRefine((input, ctx) => {
  if (input.identity !== undefined && input.environment === 'desktop') {
    const message = 'the desktop agent has a prompt of its own; an identity is for the browser families';
    ctx.addIssue({ code: 'custom', path: ['identity'], message });
  }
  if (input.signinRefresh && input.signin === undefined) {
    ctx.addIssue({ code: 'custom', path: ['signinRefresh'], message: 'signinRefresh needs a signin to save back to' });
  }
  if (input.signin !== undefined && input.environment !== 'browser') {
    ctx.addIssue({
      code: 'custom',
      path: ['signin'],
      message: 'a saved sign-in is a browser state: browser tasks only',
    });
  }
  if (input.outputSchema !== undefined && JSON.stringify(input.outputSchema).length > MAX_OUTPUT_SCHEMA_CHARS) {
    const message = `too big: more than ${MAX_OUTPUT_SCHEMA_CHARS / 1024} KB of JSON`;
    ctx.addIssue({ code: 'custom', path: ['outputSchema'], message });
  }
  const when = input.schedule?.notifyWhen;
  if (when !== undefined) {
    try {
      compileCondition(when);
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: ['schedule', 'notifyWhen'], message: (err as Error).message });
    }
  }
  if (input.startUrl === undefined) return;
  const verdict = checkUrl(narrow(WIDEST_URL_POLICY, input.urlPolicy), input.startUrl);
  if (verdict.ok) return;
  ctx.addIssue({ code: 'custom', path: ['startUrl'], message: `blocked by policy: ${verdict.reason}` });
});
export type TaskInputArgs = z.input<typeof TaskInputSchema>;
export type TaskInput = z.infer<typeof TaskInputSchema>;

/** What a pending runtime question accepts (the reply validator refuses anything else; src/agent/budget.ts). */
export type LimitQuestion = { kind: 'budget'; budget: BudgetKind; limit: number; raiseBy: number } | { kind: 'loop' };

/**
 * Who asks a question, and why: the model asks the person (`model`), the runtime asks whether to resend a request in
 * doubt (`in_doubt`), a provider asks the person to confirm an action (`provider_check`: OpenAI's pending safety
 * check, Gemini's require_confirmation; yes carries the held actions out), a budget or a loop stops the task, or a
 * request an approval rule holds waits for a person's yes (`approval`: only a person answers it, never autoReply).
 */
export const QUESTION_KINDS = ['model', 'in_doubt', 'provider_check', 'budget', 'loop', 'approval'] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];

export interface PendingQuestion {
  id: string;
  text: string;
  step: number;
  /** Who asks, and why (absent in histories recorded before kinds existed: read as `model`, or by `expects`). */
  kind?: QuestionKind;
  /** The runtime's question about a budget or a loop: the replies it accepts (src/agent/budget.ts). */
  expects?: LimitQuestion;
}

export interface TaskStatus {
  /** The task id; wire name (the status query's answer), kept so other clients and recorded histories still read it. */
  runId: string;
  status: TaskState;
  step: number;
  maxSteps: number;
  question: PendingQuestion | null;
  lastUrl: string | null;
  lastAction: string | null;
  answer: string | null;
  error: string | null;
  /** Why the task ended (null while it runs or waits). */
  endReason: EndReason | null;
  sessionGeneration: number;
  /** Invalid model outputs in a row (no valid action) so far. Wire name, kept so other clients keep reading it. */
  invalidReplies: number;
  /** When the step's model call began (ISO time, its first try), while one is under way; absent otherwise. */
  modelCallSince?: string;
  /** A pause asked for and not yet in effect (the step under way finishes first); absent otherwise. */
  pausing?: boolean;
  /** Since when the task is paused or taken over (ISO time); absent otherwise. */
  controlSince?: string;
  /** The takeover under way (status `taken_over`), or asked for and not yet given: where a person drives the page. */
  takeover?: TakeoverLease | { pending: true };
  /** Waiting for a saved sign-in another task holds (`heldBy`; null until the lock has said); absent otherwise. */
  signinWait?: { name: string; heldBy: string | null };
  /** Messages said to the task (`cua say`) the model has not read yet. */
  unreadMessages?: number;
  /** What the task has spent (model cost, tokens, working minutes) and its budgets; absent in older tasks. */
  spent?: {
    costUsd: number;
    tokens: number;
    minutes: number;
    limits: { cost?: number; tokens?: number; minutes?: number };
  };
  /** Once a task with an output schema has ended: its output (null: none) and why it has none (TaskResult's). */
  output?: TaskOutput | null;
  outputError?: string;
}

/** A person's lease on the task's live browser: where to watch and drive it, until the handback. */
export interface TakeoverLease {
  leaseId: string;
  /** The screencast-and-input page of the worker that holds the browser (with the token in its query). */
  url: string;
  /** The lease's token (also in `url`): a WebSocket client sends it as `?token=` or `Authorization: Bearer`. */
  token: string;
  /** Raw DevTools (operator only, browser.takeoverCdp): a URL chromium.connectOverCDP accepts. */
  cdpUrl?: string;
  /** When the lease began (ISO time). */
  since: string;
}

export interface StepSummary {
  step: number;
  /** Session generation the step was decided in (> 0 after a lost worker). */
  generation?: number;
  action: string;
  summary: string;
  thoughts: string;
  url: string | null;
  textObservation: string | null;
  /**
   * The worker was lost after this decision and the step was re-observed and re-decided: its effect is unknown.
   * The next summary with the same step number is the decision that counts.
   */
  superseded?: boolean;
  /** The model's output was no valid action: the one-line error the model was given. */
  invalid?: string;
}

/**
 * A task's structured output (docs/output.md): the JSON its output schema validated. `partial`: the task stopped at
 * its step or cost budget, so the output may be incomplete.
 */
export interface TaskOutput {
  value: unknown;
  partial: boolean;
}

export interface TaskResult {
  status: TaskState;
  /** Machine-readable reason beside `status` and `error` (see src/contract/end-reason.ts). */
  endReason: EndReason;
  answer: string | null;
  steps: number;
  error: string | null;
  /**
   * A task with an output schema: its output, or null when it has none (it failed, or no valid output came: see
   * `outputError`). Absent for a task without a schema, and in results recorded before outputs existed.
   */
  output?: TaskOutput | null;
  /** Why a task with an output schema has no output (one line); absent when it has one or failed. */
  outputError?: string;
}

export interface ReplyInput {
  text: string;
  /** The question being answered; a reply to an older question is rejected. */
  questionId?: string;
}

/** A control's answer: it was taken, at which step, and the task's status now. */
export interface ControlAccepted {
  accepted: true;
  step: number;
  status: TaskState;
}

export interface SayInput {
  text: string;
}

export interface HandbackInput {
  /** What the person did or wants the agent to know; the agent reads it with its next observation. */
  note?: string;
  /** The lease being handed back; a handback of another (an older) lease is refused. */
  leaseId?: string;
}

/** The failure type of a refused control (pause, resume, say, takeover, handback): its message says why, one line. */
export const CONTROL_REFUSED = 'ControlRefused';

/**
 * The failure types of a refused reply (the reply update's validator): no question is pending, the reply is for
 * another question than the pending one (details: `{ pendingQuestionId }`), or its text is unusable.
 */
export const REPLY_REFUSALS = {
  notWaiting: 'TaskNotWaiting',
  stale: 'StaleQuestion',
  invalid: 'InvalidReply',
} as const;
