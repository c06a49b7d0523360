// read_page_answer_question's model call, as act makes it: the task's endpoint, the page text cut at the worker's
// limit (browser.readPageMaxChars), and the call kept for its action's `tool_sub_calls` (model, prompt size, reply,
// duration). A retried act whose action already records the call takes that reply instead of asking again.
import { pageQuestionMessages, pageSubCallRecord } from '../src/agent/page-question';
import type { DispatchContext } from '../src/agent/dispatch';
import { SUBCALL_INDEX_HEADER } from '../src/scripted/server';
import type { ToolSubCallInput } from '../src/trajectory/schema';
import type { TrajectoryWriter } from '../src/trajectory/writer';
import type { TaskInput } from '../src/contract/task';
import { recordedSubCallReply } from './step-records';
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
    ? recordedSubCallReply((await w.events()).find((e) => e.id === req.actionId))
    : undefined;
  const answerFromPage = async (question: string, pageText: string): Promise<string> => {
    if (earlier !== undefined) return earlier;
    const messages = pageQuestionMessages(question, pageText, deps.config.browser.readPageMaxChars);
    const started = Date.now();
    const record = (outcome: Pick<Parameters<typeof pageSubCallRecord>[0], 'completion' | 'error'>) =>
      calls.push(
        pageSubCallRecord({
          model: client.endpoint.model,
          messages,
          pageChars: pageText.length,
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
