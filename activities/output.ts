// The extraction of a task's structured output (docs/output.md), on the shared queue at the task's end: one model
// call on the page-question endpoint (or the worker's `models.extract`) turns the answer, the memorized facts and the
// final page's text into JSON; the schema validates it (ajv); an invalid one gets exactly one more call with the
// validation errors. The calls are recorded in the run's `output` event (their usage counts in the run's totals); a
// retried activity finds that event and returns what it recorded instead of calling again.
import { memorizedFacts, lastObservationText } from '../src/agent/history';
import {
  EXTRACT_ATTEMPTS,
  extractionMessages,
  outputSubCallRecord,
  parseOutputJson,
  retryMessages,
} from '../src/agent/output-extract';
import type { ParsedOutput } from '../src/agent/output-extract';
import { compileOutputSchema, validationErrorLines } from '../src/agent/output-schema';
import type { ChatMessage, ModelClient } from '../src/model/client';
import { CALL_KIND_HEADER, ENTRY_INDEX_HEADER } from '../src/scripted/server';
import type { ExtractOutputInput, ExtractOutputResult } from '../src/contract/activities';
import type { TaskInput, TaskOutput } from '../src/contract/task';
import { outputEvent } from '../src/trajectory/events';
import { eventId } from '../src/trajectory/ids';
import type { Event, ToolSubCallInput } from '../src/trajectory/schema';
import { subCallsUsage } from './step-usage';
import { callModel, endpointFor } from './support';
import type { ActivityDeps, RunFiles } from './support';

/** The run file the session's release keeps the final page's text in, for the extraction (browser tasks). */
export const OUTPUT_PAGE_FILE = 'final_page_text.md';

/** The endpoint name a worker may configure for extractions; absent: the task's own endpoint. */
export const EXTRACT_ENDPOINT = 'extract';

/**
 * Keeps the final page's text for the extraction, when the task has an output schema: read as read_page_answer_question
 * reads a page (markdown; PDFs as their text), its secrets redacted. Called by the browser's release at the task's
 * end, before the browser goes. A page that cannot be read leaves no text (the extraction works without it).
 */
export async function keepOutputPage(
  files: RunFiles,
  taskId: string,
  page: { pageMarkdown(): Promise<string> },
  redact: (text: string) => string,
): Promise<void> {
  if (!(await files.input(taskId)).outputSchema) return;
  const text = await page.pageMarkdown().catch(() => '');
  await files.store.writeAtomic(`${taskId}/${OUTPUT_PAGE_FILE}`, redact(text));
}

export function createOutputActivity(deps: ActivityDeps, files: RunFiles) {
  return {
    async extractOutput(req: ExtractOutputInput): Promise<ExtractOutputResult> {
      const input = await files.input(req.runId);
      const w = await files.writer(req.runId);
      const events = await w.events();
      const id = eventId({ step: req.step, kind: 'output', generation: req.generation });
      const recorded = events.find((e) => e.id === id);
      if (recorded) return resultOf(recorded);
      const calls: ToolSubCallInput[] = [];
      const outcome = await extract(deps, files, input, req, events, calls);
      await w.appendEvent(outputEvent(req.step, { ...outcome, subCalls: calls }, { generation: req.generation }));
      return { ...outcome, usage: subCallsUsage(calls) };
    },
  };
}

/** The calls, at most two; `calls` gets each one's record. */
async function extract(
  deps: ActivityDeps,
  files: RunFiles,
  input: TaskInput,
  req: ExtractOutputInput,
  events: readonly Event[],
  calls: ToolSubCallInput[],
): Promise<{ output: TaskOutput | null; error?: string }> {
  if (!input.outputSchema) return { output: null, error: 'the task has no output schema' };
  let validate: ReturnType<typeof compileOutputSchema>;
  try {
    validate = compileOutputSchema(input.outputSchema);
  } catch (err) {
    return { output: null, error: `output schema: ${(err as Error).message}` };
  }
  const pageText = (await files.store.readText(`${req.runId}/${OUTPUT_PAGE_FILE}`)) ?? '';
  const answer = req.answer ?? (req.partial ? lastObservationText(events) : null);
  const facts = { schema: input.outputSchema, answer, facts: memorizedFacts(events), pageText, partial: req.partial };
  const client = extractionClient(deps, input);
  let messages = extractionMessages(facts, deps.config.browser.readPageMaxChars);
  let problems: string[] = [];
  for (let attempt = 0; attempt < EXTRACT_ATTEMPTS; attempt++) {
    if (attempt > 0) messages = retryMessages(messages, calls.at(-1)?.reply ?? '', problems);
    const reply = await ask(client, messages, attempt, pageText.length, calls);
    const parsed: ParsedOutput = parseOutputJson(reply);
    if (parsed.ok && validate(parsed.value)) return { output: { value: parsed.value, partial: req.partial } };
    problems = parsed.ok ? validationErrorLines(validate.errors) : [parsed.error];
  }
  return { output: null, error: `no valid output after ${EXTRACT_ATTEMPTS} calls: ${problems.join('; ')}` };
}

/** The worker's `models.extract` when it has one, else the task's endpoint (the one its page questions use). */
function extractionClient(deps: ActivityDeps, input: TaskInput): ModelClient {
  return deps.config.models[EXTRACT_ENDPOINT]
    ? endpointFor(deps.config, input, EXTRACT_ENDPOINT)
    : endpointFor(deps.config, input);
}

/** One call, recorded (also when it fails: the failure then ends the activity, and Temporal may retry it). */
async function ask(
  client: ModelClient,
  messages: ChatMessage[],
  attempt: number,
  pageChars: number,
  calls: ToolSubCallInput[],
): Promise<string> {
  const started = Date.now();
  const model = client.endpoint.model;
  // The scripted model answers the extraction from its script's `extract` list, by try (0, 1).
  const headers = { [CALL_KIND_HEADER]: 'extract', [ENTRY_INDEX_HEADER]: String(attempt) };
  try {
    const completion = await callModel(client, messages, headers);
    calls.push(outputSubCallRecord({ model, messages, pageChars, durationMs: Date.now() - started, completion }));
    return completion.text.trim();
  } catch (err) {
    calls.push(outputSubCallRecord({ model, messages, pageChars, durationMs: Date.now() - started, error: err }));
    throw err;
  }
}

/** What an `output` event recorded, as the activity's result. */
function resultOf(e: Event): ExtractOutputResult {
  const meta = e.metadata as { output?: TaskOutput | null; output_error?: unknown; tool_sub_calls?: unknown };
  return {
    output: meta.output ?? null,
    ...(typeof meta.output_error === 'string' ? { error: meta.output_error } : {}),
    usage: subCallsUsage(meta.tool_sub_calls),
  };
}
