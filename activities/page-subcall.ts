// read_page_answer_question's model call, as act makes it: the task's endpoint, the page text cut at the worker's
// limit (browser.readPageMaxChars), and the call kept for its action's `tool_sub_calls` (model, prompt size, output,
// duration). A retried act whose action already records the call takes that output instead of asking again.
import { pageQuestionMessages, pageSubCallRecord, pageTextHash } from '../src/agent/page-question';
import type { DispatchContext } from '../src/agent/dispatch';
import { SUBCALL_INDEX_HEADER } from '../src/scripted/server';
import type { ToolSubCallInput } from '../src/trajectory/schema';
import type { TrajectoryWriter } from '../src/trajectory/writer';
import type { TaskInput } from '../src/contract/task';
import { deferredAction, recordedSubCallOutput } from './step-records';
import { readRunFromStore } from '../src/trajectory/reader';
import { parseEventId } from '../src/trajectory/ids';
import { callModel, endpointFor } from './support';
import type { ActivityDeps } from './support';
import type { StepRef } from '../src/contract/activities';

export interface PageQuestioner {
  answerFromPage: DispatchContext['answerFromPage'];
  /** The calls made, for the action's `tool_sub_calls`. */
  calls: ToolSubCallInput[];
}

export async function pageQuestioner(
  deps: ActivityDeps,
  input: TaskInput,
  w: TrajectoryWriter,
  req: StepRef & { actionId: string },
): Promise<PageQuestioner> {
  const calls: ToolSubCallInput[] = [];
  const client = endpointFor(deps.config, input); // a refused endpoint fails the act here, not as an observation
  const earlier = (await w.hasEvent(req.actionId))
    ? recordedSubCallOutput((await w.events()).find((e) => e.id === req.actionId))
    : undefined;
  const reusable = await recordedAnswerFor(w, req.actionId);
  const answerFromPage = async (question: string, pageText: string): Promise<string> => {
    if (earlier !== undefined) return earlier;
    // A replayed (or cached) read_page: the recorded answer, when the page's text is the one it was asked about.
    if (reusable && reusable.question === question && reusable.pageSha256 === pageTextHash(pageText)) {
      calls.push({
        tool: 'read_page_answer_question',
        model: reusable.model,
        page_chars: pageText.length,
        reply: reusable.output, // `reply`: the run-folder field (a wire name)
        reused_from: reusable.from,
        page_sha256: reusable.pageSha256,
      });
      return reusable.output;
    }
    const messages = pageQuestionMessages(question, pageText, deps.config.browser.readPageMaxChars);
    const started = Date.now();
    const record = (outcome: Pick<Parameters<typeof pageSubCallRecord>[0], 'completion' | 'error'>) =>
      calls.push(
        pageSubCallRecord({
          model: client.endpoint.model,
          messages,
          pageChars: pageText.length,
          pageText,
          durationMs: Date.now() - started,
          ...outcome,
        }),
      );
    try {
      const completion = await callModel(client, messages, { [SUBCALL_INDEX_HEADER]: String(req.step - 1) });
      record({ completion });
      return completion.text.trim();
    } catch (err) {
      record({ error: err });
      throw err;
    }
  };
  return { answerFromPage, calls };
}

/** What a replayed read_page may reuse: the recorded call's question, page hash, output and model. */
interface RecordedAnswer {
  question: string;
  pageSha256: string;
  output: string;
  model: string;
  from: { run_id: string; step: number };
}

/**
 * The recorded answer a replayed (or cached) read_page_answer_question may reuse: its action, decided for this step,
 * names the run and step it came from (metadata.replay.of); that step's recorded sub-call gives the question, the
 * page text's hash and the output. Undefined for a decided action, or a recording without a page hash.
 */
async function recordedAnswerFor(w: TrajectoryWriter, actionId: string): Promise<RecordedAnswer | undefined> {
  const planned = await deferredAction(w, actionId);
  const of = ((planned?.metadata ?? {}) as { replay?: { of?: { run_id?: unknown; step?: unknown } } }).replay?.of;
  if (!planned || typeof of?.run_id !== 'string' || typeof of.step !== 'number') return undefined;
  const from = { run_id: of.run_id, step: of.step };
  const run = await readRunFromStore(w.store, from.run_id).catch(() => undefined);
  const recorded = run?.events.filter((e) => e.type === 'action' && parseEventId(e.id)?.step === from.step).at(-1) as
    { tool_sub_calls?: unknown[]; content: { arguments: Record<string, unknown> } } | undefined;
  const call = recorded?.tool_sub_calls?.[0] as
    { page_sha256?: unknown; reply?: unknown; model?: unknown; error?: unknown } | undefined;
  const question = recorded?.content.arguments['question'];
  if (typeof call?.page_sha256 !== 'string' || typeof call.reply !== 'string' || call.error) return undefined;
  if (typeof question !== 'string') return undefined;
  return { question, pageSha256: call.page_sha256, output: call.reply, model: String(call.model ?? ''), from };
}
