// A replay's steps (input.replayOf): the recording's action when the live page still matches it (no model call),
// else the model's decision; the first step that does not match turns the replay off for the rest of the task (or,
// `strict`, ends it with end reason replay_diverged). Deterministic.
import { ApplicationFailure, log } from '@temporalio/workflow';
import type { DecideCall, ObserveResult, SessionRef } from '../../src/contract/activities';
import { ModelFallback } from './decisions';

export class ReplayDecisions extends ModelFallback {
  /** A replayed question's recorded reply (a replay with the recorded replies), for this step's question. */
  private recordedReply: string | null = null;

  async next(session: SessionRef, obs: ObserveResult): Promise<DecideCall[] | null> {
    const { state, input, proxies } = this.ctx;
    const replay = (state.replay ??= { on: true, replayed: 0, healed: 0, decided: 0 });
    this.recordedReply = null;
    if (replay.on) {
      const got = await proxies.onSession(session, `step ${state.step} · replay`).replayStep({
        runId: input.runId,
        step: state.step,
        generation: state.generation,
        sessionId: session.sessionId,
      });
      if (got.kind !== 'diverged') {
        replay[got.kind] += 1;
        this.recordedReply = got.reply ?? null;
        state.invalidReplies = 0;
        return got.decision.calls ?? [got.decision];
      }
      replay.on = false;
      replay.diverged = { step: state.step, reason: got.reason };
      log.warn('replay diverged', { step: state.step, reason: got.reason });
      if (input.replayOf?.strict) {
        throw ApplicationFailure.nonRetryable(
          `the replay diverged at step ${state.step}: ${got.reason}`,
          'ReplayDiverged',
        );
      }
    }
    replay.decided += 1;
    return this.model.decide(obs);
  }

  override takeRecordedReply(): string | null {
    const reply = this.recordedReply;
    this.recordedReply = null;
    return reply;
  }
}
