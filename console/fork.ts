// The task page's "Fork at this step" and "Best of N from here", started as `cua fork` starts them (client/fork.ts):
// the source's run folder is checked first through the run store, so a step it did not finish or saved no page for
// is refused in one line before anything starts. Best of N is scored by a judge (the console takes no check files).
import type { AgentClient } from '../client/client';
import type { TaskDetail } from './data';
import { InvalidTaskInputError } from '../client/client';
import { checkForkSource } from '../client/fork';
import { JUDGE_KINDS } from '../src/eval/judge';
import type { JudgeKind } from '../src/eval/judge';
import type { RunStore } from '../src/trajectory/store';

/** The fork forms' fields as posted (JSON). */
export interface ForkForm {
  step?: unknown;
  hint?: unknown;
  /** Best of N: how many branches, one hint per line (taken in turn), and the judge that scores them. */
  branches?: unknown;
  hints?: unknown;
  judge?: unknown;
}

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');

function wholeNumber(field: string, v: unknown): number {
  const n = Number(text(v));
  if (text(v) === '' || !Number.isInteger(n)) {
    throw new InvalidTaskInputError(field, `must be a whole number; got '${text(v)}'`);
  }
  return n;
}

/** A fork of `source` at the form's step, with its hint if given. */
export async function forkFromForm(
  agent: AgentClient,
  store: () => RunStore,
  source: string,
  form: ForkForm,
): Promise<{ id: string; forkOf: NonNullable<TaskDetail['forkOf']> }> {
  const step = wholeNumber('step', form.step);
  const hint = text(form.hint);
  await checkForkSource(store, source, step);
  const { id } = await agent.fork(source, { step, ...(hint ? { hint } : {}) });
  return { id, forkOf: { runId: source, step } };
}

/** Best of N from the form's step: N branches, the hints in turn, scored by the chosen judge (default webjudge). */
export async function bestOfFromForm(
  agent: AgentClient,
  store: () => RunStore,
  source: string,
  form: ForkForm,
): Promise<{ id: string; branches: string[] }> {
  const step = wholeNumber('step', form.step);
  const branches = wholeNumber('branches', form.branches);
  const hints = text(form.hints)
    .split('\n')
    .map((h) => h.trim())
    .filter(Boolean);
  const judge = text(form.judge) || 'webjudge';
  if (judge === 'none' || !(JUDGE_KINDS as readonly string[]).includes(judge)) {
    const kinds = JUDGE_KINDS.filter((k) => k !== 'none');
    throw new InvalidTaskInputError('judge', `must be one of ${kinds.join(', ')}; got '${judge}'`);
  }
  await checkForkSource(store, source, step);
  const started = await agent.bestOf(source, {
    step,
    branches,
    ...(hints.length ? { hints } : {}),
    judge: { kind: judge as Exclude<JudgeKind, 'none'> },
  });
  return { id: started.id, branches: started.branches };
}
