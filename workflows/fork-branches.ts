// Best of N (`cua fork <id> --step N --branches K`, issue 27): K forks of one run at one step, started side by side as
// child `agentTask`s of this workflow, each scored when it ends as an evaluation scores a run (the branches' task is
// a one-task task set in the run store: its rule checks, else the LLM judge), and the best one reported. With
// `cancelRest`, the first branch that passes cancels those still running. Cancelling this workflow cancels its
// branches (they are children in its cancellation scope; a terminated parent asks them to cancel too). The record
// (branches.json beside the task set) is rewritten as branches end, for `cua show` and `cua view`. A new workflow
// type: no agentTask history changes. Deterministic: only @temporalio/workflow and pure modules.
import {
  CancellationScope,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  startChild,
} from '@temporalio/workflow';
import type { Activities } from './activity-proxies';
import { AGENT_WORKFLOW } from '../src/contract/task';
import type { TaskInputArgs, TaskResult } from '../src/contract/task';
import { attemptKind, outcomeOfResult } from '../src/eval/records';
import type { AttemptOutcome, TaskSetRef } from '../src/eval/records';
import { passes, pickWinner, verdictOf } from '../src/eval/branches';
import type { BranchesInput, BranchesRecord, BranchRecord } from '../src/eval/branches';
import { branchesQuery, outcomeOfFailure } from './eval-messages';
import { judgeAttempt, scoreAttempt, scoreOf } from './eval-scoring';
import { STATUS_SEARCH_ATTRIBUTE, STEP_SEARCH_ATTRIBUTE } from './messages';

const { prepareBranches, recordBranches } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
});

export async function forkBranches(input: BranchesInput): Promise<BranchesRecord> {
  const run = new BranchesRun(input);
  setHandler(branchesQuery, () => run.record());
  return run.run();
}

class BranchesRun {
  private readonly branches: BranchRecord[];
  private readonly scopes: CancellationScope[] = [];
  private done = false;

  constructor(private readonly input: BranchesInput) {
    this.branches = input.branches.map((b, i) => ({
      index: i + 1,
      runId: b.runId,
      model: b.model?.model ?? null,
      hint: b.forkOf?.hint ?? null,
      state: 'running',
      endReason: null,
      steps: null,
      answer: null,
      score: null,
      scoredBy: null,
      reasoning: null,
    }));
  }

  record(): BranchesRecord {
    const { id, source, instruction, cancelRest } = this.input;
    const winner = pickWinner(this.branches);
    return {
      id,
      source,
      instruction,
      cancelRest: cancelRest ?? false,
      state: this.done ? 'done' : 'running',
      branches: this.branches.map((b) => ({ ...b })),
      winner: winner?.runId ?? null,
      verdict: verdictOf(this.branches, this.done),
    };
  }

  async run(): Promise<BranchesRecord> {
    const { id, instruction, task } = this.input;
    const taskSet = await prepareBranches({ id, instruction, task });
    await this.save();
    await Promise.all(this.input.branches.map((b, i) => this.branch(i, b, taskSet)));
    this.done = true;
    return this.save();
  }

  /** Records the parent's state (branches.json) and shows it in the Temporal UI; returns it. */
  private async save(): Promise<BranchesRecord> {
    const record = this.record();
    setCurrentDetails(
      `**${record.verdict}**\n\n` +
        this.branches
          .map(
            (b) =>
              `${b.index}. ${b.runId} · ${b.state}${b.endReason ? ` (${b.endReason})` : ''}` +
              `${b.steps !== null ? ` · ${b.steps} steps` : ''}${b.score !== null ? ` · score ${b.score}` : ''}`,
          )
          .join('\n'),
    );
    await recordBranches(record);
    return record;
  }

  /** One branch: its child task to its end, then its score (unless cancelled or ended by the environment). */
  private async branch(i: number, args: TaskInputArgs, taskSet: TaskSetRef): Promise<void> {
    const b = this.branches[i]!;
    const scope = new CancellationScope();
    this.scopes[i] = scope;
    let outcome: AttemptOutcome;
    try {
      outcome = await scope.run(async () => {
        const child = await startChild(AGENT_WORKFLOW, {
          workflowId: args.runId,
          args: [args],
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          staticSummary: this.summaryOf(b, args),
          memo: {
            instruction: args.instruction.slice(0, 400),
            forkOf: { runId: this.input.source.runId, step: this.input.source.step },
            branchOf: { parent: this.input.id, index: b.index, of: this.branches.length },
          },
          typedSearchAttributes: args.searchAttributes
            ? [
                { key: STATUS_SEARCH_ATTRIBUTE, value: 'running' },
                { key: STEP_SEARCH_ATTRIBUTE, value: 0 },
              ]
            : [],
        });
        return outcomeOfResult((await child.result()) as TaskResult);
      });
    } catch (err) {
      outcome = outcomeOfFailure(err);
    }
    Object.assign(b, {
      endReason: outcome.endReason,
      steps: outcome.steps,
      answer: outcome.answer?.slice(0, 500) ?? null,
    });
    if (outcome.endReason === 'cancelled' && b.state === 'cancelled') {
      await this.save();
      return;
    }
    if (attemptKind(outcome.endReason) !== 'scored') {
      Object.assign(b, {
        state: 'done',
        reasoning: `not scored: it ended with ${outcome.endReason}${outcome.error ? ` (${outcome.error.slice(0, 300)})` : ''}`,
      });
      await this.save();
      return;
    }
    b.state = 'scoring';
    const { judge } = this.input;
    const s = await scoreAttempt(taskSet, judge, 0, b.runId, outcome);
    const verdict = s.judge ? await judgeAttempt(taskSet, judge, s.judge, 0, b.runId, outcome) : null;
    const { score, reasoning, scoredBy } = scoreOf(s, verdict);
    Object.assign(b, { state: 'done', score, reasoning, scoredBy: scoredBy ?? null });
    if (this.input.cancelRest && passes(score)) this.cancelRest(b);
    await this.save();
  }

  /** The first branch that passed cancels the branches still running (each is recorded as cancelled by it). */
  private cancelRest(winner: BranchRecord): void {
    for (const other of this.branches) {
      if (other.state !== 'running') continue;
      Object.assign(other, { state: 'cancelled', reasoning: `cancelled: branch ${winner.index} passed first` });
      this.scopes[other.index - 1]?.cancel();
    }
  }

  /** The branch's summary in the Temporal UI: which branch of which run's step, and its instruction. */
  private summaryOf(b: BranchRecord, args: TaskInputArgs): string {
    const { source } = this.input;
    const what = [b.model ? `model ${b.model}` : '', b.hint ? `hint "${b.hint.slice(0, 60)}"` : '']
      .filter(Boolean)
      .join(', ');
    return (
      `branch ${b.index} of ${this.branches.length} (best of, parent ${this.input.id}): fork of ${source.runId} ` +
      `at step ${source.step}${what ? ` (${what})` : ''}: ${args.instruction}`
    ).slice(0, 400);
  }
}
