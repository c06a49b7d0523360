// Run-folder activities on the shared queue: start a run, pause it for a question, record a reply, finish it.
import { taskMessage, userReply } from '../src/trajectory/events';
import { TrajectoryWriter } from '../src/trajectory/writer';
import { desktopScreen } from './desktop-session';
import type { TaskInput } from '../workflows/contract';
import { withoutStoreWait } from './support';
import type { ActivityDeps, RunFiles } from './support';
import type { FinalizeInput, RecordReplyInput } from './types';

export function createRunActivities(deps: ActivityDeps, files: RunFiles) {
  return {
    /** Creates (or, on a retry, reopens) the run folder and records the task. */
    async startRun(input: TaskInput): Promise<void> {
      const { writer: w } = await TrajectoryWriter.openOrCreate(files.store, input.runId, {
        task_id: input.runId,
        instruction: input.instruction,
        environment_config:
          input.environment === 'desktop'
            ? { environment: 'desktop', screen: desktopScreen(input) }
            : { start_url: input.startUrl ?? null, viewport: input.viewport },
        metadata:
          input.environment === 'desktop' ? { profile: 'desktop', environment: 'desktop' } : { profile: input.profile },
      });
      files.adopt(input.runId, w);
      const state = await w.readRunState();
      if (!state.input) await w.writeRunState({ ...state, input });
      await w.appendEvent(taskMessage(input.instruction));
    },

    /** Marks the run as waiting for the user and writes a data_point.json snapshot (a pause). */
    async pause(req: { runId: string; question: string }): Promise<void> {
      const w = await files.writer(req.runId);
      await w.writeStatus('waiting_for_user', req.question);
      await w.writeDataPoint();
    },

    async recordReply(req: RecordReplyInput): Promise<void> {
      const w = await files.writer(req.runId);
      await w.appendEvent(userReply(req.step, req.text, { metadata: { question_id: req.questionId } }));
      await w.writeStatus('running');
    },

    /**
     * Records how the task ended. For a task the run store ended (`run_folder`) or one being cancelled, tried once:
     * not waiting out a store that is full or unreachable (the operator who cancels wants it to end now).
     */
    async finalize(req: FinalizeInput): Promise<void> {
      const record = async () => {
        const w = await files.writer(req.runId);
        await w.writeStatus(req.status, req.answer, req.reason ?? undefined, req.endReason);
        await w.writeDataPoint();
        files.forget(req.runId);
      };
      const once = req.endReason === 'run_folder' || req.status === 'cancelled';
      await (once ? withoutStoreWait(record) : record());
    },
  };
}
