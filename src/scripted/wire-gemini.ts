// The Gemini API's wire for the scripted model server (`POST …/models/{model}:generateContent`): reads a request with
// the stand-in's readGeminiRequest (the key from `x-goog-api-key` or `?key=`), counts its turn (user contents minus
// one), finds the person's reply and whether a safety decision was acknowledged or declined, and answers in Gemini's
// response and error shapes, in the function set the model's name implies (geminiFunctionSetForModel).
import {
  GEMINI_REFERENCE_SCREEN,
  geminiFunctionSetForModel,
  geminiResponse,
  readGeminiRequest,
} from './providers/gemini-generate';
import type { GeminiRequestFacts } from './providers/gemini-generate';
import type { StandInOutput } from './providers/output';
import { isRecord, recordsOf, textsAndImages } from './provider-wire';
import type { Json, ProviderWire, WireCall } from './provider-wire';
import type { ProviderTurn } from './script-turns';

/** `…/models/{model}:generateContent`, whatever comes before (`/v1beta`, `/v1/v1beta`, …). */
const PATH = /\/models\/([^/:?]+):generateContent$/;
const KEY_HEADER = 'x-goog-api-key';

const roleOf = (c: Json): unknown => c.role ?? 'user';
const partsOf = (c: Json | undefined): Json[] => recordsOf(c?.parts);
const callsOf = (c: Json | undefined): Json[] => partsOf(c).filter((p) => isRecord(p.functionCall ?? p.function_call));
const textsOf = (c: Json | undefined): string[] =>
  partsOf(c).flatMap((p) => (typeof p.text === 'string' && p.text !== '' ? [p.text] : []));

/** The first text of the latest user content that follows a model content without function calls. */
function latestReply(contents: Json[]): string | undefined {
  let reply: string | undefined;
  contents.forEach((c, i) => {
    const before = contents[i - 1];
    if (roleOf(c) !== 'user' || !before || roleOf(before) !== 'model' || callsOf(before).length > 0) return;
    reply = textsOf(c)[0] ?? reply;
  });
  return reply;
}

function againstPrevious(contents: Json[], facts: GeminiRequestFacts, prev: ProviderTurn, prevIndex: number) {
  const problems: string[] = [];
  const last = contents.findLast((c) => roleOf(c) === 'model');
  const called = callsOf(last).length > 0;
  if (prev.output.malformed !== 'malformed-function-call') {
    if (prev.output.actions.length > 0 && !called) {
      problems.push(`the last model content has no functionCall, but turn ${prevIndex + 1} sent calls`);
    }
    if (prev.output.actions.length === 0 && called) {
      problems.push(`the last model content has functionCall parts, but turn ${prevIndex + 1} sent text`);
    }
  }
  if (prev.output.safetyCheck) {
    const declined = textsOf(contents[contents.length - 1]).some((t) => t.trim() !== '');
    if (facts.acknowledged.length === 0 && !declined) {
      problems.push(
        `pending safety check (safety_decision require_confirmation on turn ${prevIndex + 1}) neither acknowledged ` +
          '(response.safety_acknowledgement in its functionResponse) nor declined (a user text after the results)',
      );
    }
  }
  return problems;
}

function read(headers: Record<string, string | undefined>, url: URL, body: unknown): WireCall {
  const key = headers[KEY_HEADER] || url.searchParams.get('key') || undefined;
  const facts = readGeminiRequest({ ...headers, [KEY_HEADER]: key }, body);
  const req = isRecord(body) ? body : {};
  const contents = recordsOf(req.contents);
  const { texts, images } = textsAndImages(req.contents);
  const script = decodeURIComponent(PATH.exec(url.pathname)?.[1] ?? '').replace(/^models\//, '');
  const ctx = (index: number) => ({
    screenshot: facts.screenshot,
    functionSet: geminiFunctionSetForModel(script),
    excludedFunctions: facts.excludedFunctions,
    model: script,
    responseId: `standin-${index}`,
  });
  return {
    script,
    apiKey: key ?? null,
    problems: facts.problems.filter((p) => !p.startsWith(`${KEY_HEADER} header missing`)),
    acknowledged: facts.acknowledged,
    tool: facts.environment === null ? null : `computer_use ${facts.environment}`,
    screen: facts.screenshot ?? GEMINI_REFERENCE_SCREEN,
    turn: contents.filter((c) => roleOf(c) === 'user').length - 1,
    reply: latestReply(contents),
    lastUserText: textsOf(contents.findLast((c) => roleOf(c) === 'user')).join('\n'),
    allText: texts.join('\n'),
    imageCount: images,
    messageCount: contents.length,
    oneActionPerTurn: false,
    typeAtPointer: geminiFunctionSetForModel(script) === '2.5',
    againstPrevious: (prev, prevIndex) => againstPrevious(contents, facts, prev, prevIndex),
    respond: (output: StandInOutput, index: number) => geminiResponse(output, ctx(index)),
    empty: (index: number) => ({ candidates: [], modelVersion: script, responseId: `standin-${index}` }),
  };
}

const STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Gemini's error body: `{ error: { code, message, status } }`. */
function error(status: number, message: string): unknown {
  return {
    error: { code: status, message, status: STATUSES[status] ?? (status < 500 ? 'FAILED_PRECONDITION' : 'INTERNAL') },
  };
}

export const geminiWire: ProviderWire = {
  provider: 'gemini',
  matches: (path) => PATH.test(path),
  read,
  error,
};
