// Run-folder activities on the shared queue: start a run, pause it for a question, record a reply, finish it.
import { lastObservationText } from '../src/agent/history';
import { endpointFamilyIssue } from '../src/model/endpoint-prompt';
import { familyIssue, familyOf } from '../src/families/registry';
import type { ModelFamily } from '../src/families/family';
import { PromptActionsError } from '../src/model/errors';
import {
  followupMessage,
  handbackEvent,
  noteEvent,
  runtimeQuestion,
  steerMessage,
  taskMessage,
  userReply,
} from '../src/trajectory/events';
import { costCapError } from '../src/agent/budget';
import { screenDistance } from '../src/image/distance';
import { parseEventId } from '../src/trajectory/ids';
import type { Event } from '../src/trajectory/schema';
import { TrajectoryWriter } from '../src/trajectory/writer';
import { desktopScreen } from './environments/desktop-step';
import { decideApproval, resolveHeldRequests } from './environments/request-log';
import type { TaskInput } from '../src/contract/task';
import { nonRetryable, withoutStoreWait } from './support';
import type { ActivityDeps, RunFiles } from './support';
import type {
  FinalizeInput,
  FinalizeResult,
  RecordControlInput,
  RecordReplyInput,
  ScreenDistanceInput,
  StartFollowUpInput,
  StartFollowUpResult,
  StartRunResult,
  TaskActivities,
} from '../src/contract/activities';

export function createRunActivities(deps: ActivityDeps, files: RunFiles) {
  return {
    /**
     * Creates (or, on a retry, reopens) the run folder and records the task; then refuses (InvalidTaskInput) a task
     * its endpoint's prompt settings do not fit (see checkEndpointFits). Returns the events this worker's webhook
     * wants (nothing without a webhook: the workflow then starts no notifications).
     */
    async startRun(input: TaskInput): Promise<StartRunResult | undefined> {
      const recorded = input.replayOf?.runId;
      const w = await openRunFolder(files, input, {
        ...(recorded ? { replay_of: { run_id: recorded } } : {}),
        ...(input.cache ? { cache: { name: input.cache.name } } : {}),
      });
      if (recorded && !(await files.store.exists(`${recorded}/task.json`))) {
        nonRetryable(new Error(`no recorded run ${recorded} in the run store to replay`), 'InvalidTaskInput');
      }
      await w.appendEvent(taskMessage(input.instruction));
      await checkEndpointFits(deps, input);
      return startFactsOf(deps, input);
    },

    /** Marks the run as waiting for the user and writes a data_point.json snapshot (a pause). */
    async pause(req: Parameters<TaskActivities['pause']>[0]): Promise<void> {
      const w = await files.writer(req.runId);
      await w.writeStatus('waiting_for_user', req.question);
      await w.writeDataPoint();
    },

    async recordReply(req: RecordReplyInput): Promise<void> {
      const { runId: taskId } = req;
      const w = await files.writer(taskId);
      const call = req.call ?? 0;
      // A reply to an approval decides it first: the decision is in the journal before the reply counts as recorded.
      const approval = req.approvalHolds?.length
        ? await decideApproval(files.store, taskId, {
            holds: req.approvalHolds,
            questionId: req.questionId,
            text: req.text,
          })
        : {};
      const metadata = { question_id: req.questionId, ...approval };
      await w.appendEvent(userReply(req.step, req.text, { call, metadata }));
      // The user replied to the runtime's question about a held-back resend: the request may go again if the model
      // (which reads the reply) sends it.
      if (req.settlesHeldRequests) await resolveHeldRequests(files.store, taskId);
      await w.writeStatus('running');
    },

    /** A control's trace: the status it leaves, a message said to the task, or the note of a handback. */
    async recordControl(req: RecordControlInput): Promise<void> {
      const w = await files.writer(req.runId);
      const stamp = { generation: req.generation, metadata: req.metadata ?? {} };
      if (req.kind === 'say') await w.appendEvent(steerMessage(req.step, req.text ?? '', req.index ?? 1));
      if (req.kind === 'handback') await w.appendEvent(handbackEvent(req.step, req.text ?? '', stamp));
      if (req.kind === 'loop')
        await w.appendEvent(noteEvent(req.step, req.text ?? '', { ...stamp, metadata: { note: 'loop' } }));
      if (req.kind === 'question') {
        const asked = runtimeQuestion(req.step, req.text ?? '', { ...stamp, call: req.index ?? 1 });
        if (!(await w.hasEvent(asked.id))) await w.appendEvent(asked);
      }
      if (req.kind === 'paused' || req.kind === 'taken_over') {
        await w.writeStatus(req.kind);
        await w.writeDataPoint(); // a snapshot, as at a question: the run may stay so for days
      }
      if (req.kind === 'resumed' || req.kind === 'handback') await w.writeStatus('running');
    },

    /**
     * A follow-up task in the run of a finished task (`cua continue`): its instruction is recorded as a followup_task
     * message for the step after the run's last, and the run is running again. Returns that last step.
     */
    /** The distance between two of a run's screenshots (src/image/distance.ts); 1 when either is missing. */
    async screenDistance(req: ScreenDistanceInput): Promise<number> {
      const { runId: taskId } = req;
      const [a, b] = await Promise.all([files.readBytes(taskId, req.a), files.readBytes(taskId, req.b)]);
      return a && b ? screenDistance(a, b) : 1;
    },

    async startFollowUp(req: StartFollowUpInput): Promise<StartFollowUpResult> {
      const { runId: taskId } = req;
      const w = await files.writer(taskId);
      const events = await w.events();
      const steps = lastStep(events);
      await w.appendEvent(followupMessage(steps + 1, req.text));
      await w.writeStatus('running', null);
      return { steps, ...startFactsOf(deps, await files.input(taskId)) };
    },

    /**
     * Records how the task ended and writes data_point.json. A task whose step budget ran out (and has no answer)
     * gets the last step's observation text as its answer, as in the original (its status stays max_rounds);
     * returns the answer recorded. For a task the run store ended (`run_folder`) or one being cancelled, tried once:
     * not waiting out a store that is full or unreachable (the operator who cancels wants it to end now).
     */
    async finalize(req: FinalizeInput): Promise<FinalizeResult> {
      const { runId: taskId } = req;
      let answer = req.answer;
      const record = async () => {
        const w = await files.writer(taskId);
        if (req.status === 'max_rounds' && req.answer === null) answer = lastObservationText(await w.events());
        const output = req.output !== undefined ? { output: req.output, error: req.outputError } : undefined;
        await w.writeStatus(req.status, answer, req.reason ?? undefined, req.endReason, output);
        await w.writeDataPoint();
        files.forget(taskId);
      };
      const once = req.endReason === 'run_folder' || req.status === 'cancelled';
      await (once ? withoutStoreWait(record) : record());
      return { answer };
    },
  };
}

/**
 * Creates (or, on a retry, reopens) a task's run folder: task.json (with `metadata` besides the task's family, as `profile`) and
 * the task input in run_state.json.
 */
export async function openRunFolder(
  files: RunFiles,
  input: TaskInput,
  metadata: Record<string, unknown> = {},
): Promise<TrajectoryWriter> {
  const { runId: taskId } = input;
  const { writer: w } = await TrajectoryWriter.openOrCreate(files.store, taskId, {
    task_id: taskId,
    instruction: input.instruction,
    environment_config:
      input.environment === 'desktop'
        ? { environment: 'desktop', screen: desktopScreen(input) }
        : { start_url: input.startUrl ?? null, viewport: input.viewport },
    metadata: {
      ...(input.environment === 'desktop'
        ? { profile: 'desktop', environment: 'desktop' }
        : { profile: input.profile }),
      ...metadata,
    },
  });
  files.adopt(taskId, w);
  const state = await w.readRunState();
  if (!state.input) await w.writeRunState({ ...state, input });
  return w;
}

/**
 * The task's model family, checked where the task starts running (the contract cannot know the registry): an unknown
 * family, or an identity that is no registry name of it, ends the task (InvalidTaskInput) with one line.
 */
export function taskFamily(input: TaskInput): ModelFamily {
  const issue = familyIssue(input);
  if (issue) nonRetryable(new Error(`${issue.field}: ${issue.reason}`), 'InvalidTaskInput');
  return familyOf(input.profile);
}

/**
 * Refuses (InvalidTaskInput) a task its endpoint's prompt settings do not fit: an unknown family, another declared
 * family, another family's identity, a prompt file offering actions the task's family lacks (or a prompt file that
 * cannot be read: PromptFileError).
 */
export async function checkEndpointFits(deps: ActivityDeps, input: TaskInput): Promise<void> {
  if (input.environment === 'desktop') return;
  const family = taskFamily(input);
  const name = input.model.endpoint;
  const settings = deps.config.models[name];
  const issue = settings && endpointFamilyIssue(name, settings, family, input.identity);
  if (issue) nonRetryable(new Error(issue), 'InvalidTaskInput');
  if (settings?.promptFile) {
    await family.promptFileActions(settings.promptFile).catch((err: unknown) => {
      if (!(err instanceof PromptActionsError)) nonRetryable(err); // PromptFileError: end reason input
      nonRetryable(
        new Error(`model endpoint '${name}': ${err.message} (models.${name}.promptFile)`),
        'InvalidTaskInput',
      );
    });
  }
}

/**
 * What a starting worker says: the events its webhook wants, its budgets (nothing without either). Refuses
 * (InvalidTaskInput) a task whose cost limit is above the worker's cap.
 */
export function startFactsOf(deps: ActivityDeps, input: TaskInput): StartRunResult | undefined {
  const notifyEvents = deps.config.notifications?.webhook?.events;
  const budget = deps.config.budget;
  const capError = costCapError(input.budget?.maxCost ?? 0, budget?.costCap, "the task's cost limit");
  if (capError) nonRetryable(new Error(capError), 'InvalidTaskInput');
  if (!notifyEvents && !budget) return undefined;
  return { ...(notifyEvents ? { notifyEvents } : {}), ...(budget ? { budget } : {}) };
}

/** The highest step a run's events name (0 for none). */
function lastStep(events: readonly Event[]): number {
  return events.reduce((max, e) => Math.max(max, parseEventId(e.id)?.step ?? 0), 0);
}
