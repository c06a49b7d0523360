// The OpenAI Responses API's wire for the scripted model server (`POST …/responses`): reads a request with the
// stand-in's readOpenAiRequest, counts its turn (runs of model-output items in `input`), finds the person's reply and
// whether a pending safety check was acknowledged or declined, and answers in OpenAI's response and error shapes.
import { openAiResponse, readOpenAiRequest } from './providers/openai-responses';
import type { OpenAiRequestFacts } from './providers/openai-responses';
import type { StandInOutput } from './providers/output';
import { isRecord, pad4, recordsOf, textsAndImages } from './provider-wire';
import type { Json, ProviderWire, WireCall } from './provider-wire';
import type { ProviderTurn } from './script-turns';

/** The screen assumed when a request carried no screenshot (the size OpenAI's guide recommends). */
const FALLBACK_SCREEN = { width: 1440, height: 900 };

const isMessage = (i: Json): boolean => i.type === 'message' || (i.type === undefined && 'role' in i);
const isModelItem = (i: Json): boolean =>
  i.type === 'reasoning' || i.type === 'computer_call' || (isMessage(i) && i.role === 'assistant');
const isUserMessage = (i: Json): boolean => isMessage(i) && i.role === 'user';

/** A message item's texts (`content` a string, or input_text / output_text parts). */
function textsOf(item: Json | undefined): string[] {
  if (!item) return [];
  if (typeof item.content === 'string') return [item.content];
  return recordsOf(item.content).flatMap((p) => (typeof p.text === 'string' ? [p.text] : []));
}

/** The runs of consecutive model-output items in `input`, as [start, end) index pairs. */
function modelRuns(items: Json[]): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  items.forEach((item, i) => {
    if (!isModelItem(item)) return;
    const last = runs[runs.length - 1];
    if (last && last[1] === i) last[1] = i + 1;
    else runs.push([i, i + 1]);
  });
  return runs;
}

/** The first text of the user message that follows the latest text-only run of model items. */
function latestReply(items: Json[], runs: Array<[number, number]>): string | undefined {
  let reply: string | undefined;
  for (const [start, end] of runs) {
    if (items.slice(start, end).some((i) => i.type === 'computer_call')) continue;
    const next = items.slice(end).find((i) => !isModelItem(i));
    const text = next && isUserMessage(next) ? textsOf(next)[0] : undefined;
    if (text !== undefined) reply = text;
  }
  return reply;
}

function againstPrevious(items: Json[], facts: OpenAiRequestFacts, prev: ProviderTurn, prevIndex: number): string[] {
  const runs = modelRuns(items);
  const [start, end] = runs[runs.length - 1] ?? [0, 0];
  const run = items.slice(start, end);
  const problems: string[] = [];
  const call = run.find((i) => i.type === 'computer_call');
  const called = call !== undefined;
  if (prev.output.actions.length > 0 && !called) {
    problems.push(`the last model turn replayed in input has no computer_call, but turn ${prevIndex + 1} sent one`);
  }
  if (call && call.call_id !== `call_${pad4(prevIndex)}`) {
    problems.push(
      `the last computer_call replayed is ${String(call.call_id)}, not call_${pad4(prevIndex)} of turn ${prevIndex + 1}`,
    );
  }
  if (prev.output.actions.length === 0 && called) {
    problems.push(`the last model turn replayed in input has a computer_call, but turn ${prevIndex + 1} sent text`);
  }
  const check = prev.output.safetyCheck;
  if (check) {
    const id = `cs_${pad4(prevIndex)}`;
    const declined = items.slice(end).some((i) => isUserMessage(i) && textsOf(i).some((t) => t.trim() !== ''));
    if (!facts.acknowledged.includes(id) && !declined) {
      problems.push(
        `pending safety check ${id} (${check.code}) neither acknowledged (acknowledged_safety_checks on the ` +
          `computer_call_output of call_${pad4(prevIndex)}) nor declined (a user message after it)`,
      );
    }
  }
  return problems;
}

function read(headers: Record<string, string | undefined>, _url: URL, body: unknown): WireCall {
  const facts = readOpenAiRequest(headers, body);
  const req = isRecord(body) ? body : {};
  const items = recordsOf(req.input);
  const runs = modelRuns(items);
  const lastUser = items.findLast(isUserMessage);
  const { texts, images } = textsAndImages(req.input);
  const script = typeof req.model === 'string' ? req.model : '';
  const ctx = {
    tool: facts.tool ?? 'computer',
    screenshot: facts.screenshot,
    display: facts.display,
    model: script,
    encryptedReasoning: facts.encryptedReasoning,
  } as const;
  return {
    script,
    apiKey: facts.apiKey,
    problems: facts.problems.filter((p) => !p.startsWith('Authorization')),
    acknowledged: facts.acknowledged,
    tool: facts.tool,
    screen: facts.screenshot ?? facts.display ?? FALLBACK_SCREEN,
    turn: runs.length,
    reply: latestReply(items, runs),
    lastUserText: textsOf(lastUser).join('\n'),
    allText: texts.join('\n'),
    imageCount: images,
    messageCount: items.length,
    oneActionPerTurn: facts.tool === 'computer_use_preview',
    typeAtPointer: false,
    againstPrevious: (prev, prevIndex) => againstPrevious(items, facts, prev, prevIndex),
    respond: (output: StandInOutput, index: number) => openAiResponse(output, { ...ctx, sequence: index }),
    empty: (index: number) => ({
      ...(openAiResponse({ thoughts: '', actions: [] }, { ...ctx, sequence: index }) as Json),
      output: [],
    }),
  };
}

/** OpenAI's error body: `{ error: { message, type, param, code } }`. */
function error(status: number, message: string): unknown {
  const type = status === 429 ? 'rate_limit_exceeded' : status < 500 ? 'invalid_request_error' : 'server_error';
  const code = status === 401 ? 'invalid_api_key' : null;
  return { error: { message, type, param: null, code } };
}

export const openAiWire: ProviderWire = {
  provider: 'openai',
  matches: (path) => path.endsWith('/responses'),
  read,
  error,
};
