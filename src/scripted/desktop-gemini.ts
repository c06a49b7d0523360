// The desktop agent's calls on Gemini's generateContent with function calling
// (`POST …/models/{model}:generateContent` with `x-cua-call`): the request checked against the documented format, one
// line per problem, and the answer as a `GenerateContentResponse`. Written from Google's function-calling
// documentation and the types of @google/genai 2.32 (`Content`, `Part`, `Blob`, `FunctionDeclaration` with
// `parameters` or `parametersJsonSchema`, `FunctionCallingConfig`, `FunctionCall`, `Candidate`, `FinishReason`),
// never from our adapters. The REST body may be camelCase (as the SDK writes it) or snake_case: both are read.
// The route itself is provider-desktop.ts.
import { FinishReason, FunctionCallingConfigMode } from '@google/genai';
import type { Candidate, GenerateContentResponseUsageMetadata, Part } from '@google/genai';
import { isRecord, recordsOf } from './provider-wire';
import type { Json } from './provider-wire';
import type { DesktopAnswer, DesktopAnswerContext, DesktopCallWire, DesktopRequest } from './desktop-entry';

/** `…/models/{model}:generateContent`, whatever comes before (`/v1beta`, …). */
const PATH = /\/models\/([^/:?]+):generateContent$/;
const KEY_HEADER = 'x-goog-api-key';
/** FunctionDeclaration.name: a letter or underscore first, then letters, digits, `_ . : -`; at most 128 (SDK doc). */
const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/;
/** The image types Gemini reads (its image-understanding documentation). */
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif'];
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
/** A part's data fields: exactly one of them per part. */
const PART_DATA = [
  'text',
  'inlineData',
  'fileData',
  'functionCall',
  'functionResponse',
  'executableCode',
  'codeExecutionResult',
];
const MODES: readonly string[] = Object.values(FunctionCallingConfigMode);

/** A field in camelCase or its snake_case spelling. */
function field(o: Json | undefined, camel: string): unknown {
  return o?.[camel] ?? o?.[camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}
const roleOf = (c: Json): unknown => c.role ?? 'user';
const partsOf = (c: Json | undefined): Json[] => recordsOf(c?.parts);
const textsOf = (c: Json | undefined): string[] =>
  partsOf(c).flatMap((p) => (typeof p.text === 'string' && p.text !== '' ? [p.text] : []));

/** An inlineData blob's problems; counts it when it is an image. */
function blobProblems(blob: unknown, where: string, count: { images: number }): string[] {
  if (!isRecord(blob)) return [`${where}: inlineData is not an object`];
  const mime = field(blob, 'mimeType');
  const problems: string[] = [];
  if (typeof mime !== 'string' || mime === '') problems.push(`${where}: inlineData.mimeType missing`);
  else if (mime.startsWith('image/')) {
    count.images++;
    if (!IMAGE_TYPES.includes(mime)) problems.push(`${where}: image mimeType ${mime} is not one of ${IMAGE_TYPES}`);
  }
  if (typeof blob.data !== 'string' || !BASE64.test(blob.data))
    problems.push(`${where}: inlineData.data is not base64`);
  return problems;
}

function partProblems(p: Json, where: string, count: { images: number }): string[] {
  const present = PART_DATA.filter((f) => field(p, f) !== undefined);
  if (present.length !== 1) {
    return [`${where}: a part carries exactly one of ${PART_DATA.join(', ')} (this one: ${present.join(', ') || '—'})`];
  }
  if (present[0] === 'text' && typeof p.text !== 'string') return [`${where}: text is not a string`];
  const problems: string[] = [];
  if (present[0] === 'inlineData') problems.push(...blobProblems(field(p, 'inlineData'), where, count));
  const response = field(p, 'functionResponse');
  if (isRecord(response)) {
    recordsOf(response.parts).forEach((rp, k) => {
      const blob = field(rp, 'inlineData');
      if (blob !== undefined) problems.push(...blobProblems(blob, `${where}.functionResponse.parts[${k}]`, count));
    });
  }
  return problems;
}

/** A Content's problems (`contents[i]`, or the system instruction when `system`). */
function contentProblems(c: unknown, where: string, count: { images: number }, system = false): string[] {
  if (!isRecord(c)) return [`${where} is not a Content object`];
  const problems: string[] = [];
  if (!system && c.role !== undefined && c.role !== 'user' && c.role !== 'model') {
    problems.push(`${where}: role ${JSON.stringify(c.role)} (user or model)`);
  }
  if (!Array.isArray(c.parts) || c.parts.length === 0) return [...problems, `${where}: parts missing or empty`];
  c.parts.forEach((p: unknown, k) => {
    const at = `${where}.parts[${k}]`;
    if (!isRecord(p)) problems.push(`${at} is not an object`);
    else if (system && typeof p.text !== 'string') problems.push(`${at}: a system instruction is text only`);
    else problems.push(...partProblems(p, at, count));
  });
  return problems;
}

/** One FunctionDeclaration's problems: its name, and `parameters` or `parametersJsonSchema` (not both), objects. */
function declarationProblems(d: Json, where: string, names: string[]): string[] {
  const problems: string[] = [];
  const name = typeof d.name === 'string' ? d.name : '';
  if (!FUNCTION_NAME.test(name))
    problems.push(`${where}: name ${JSON.stringify(d.name)} does not match ${FUNCTION_NAME}`);
  else if (names.includes(name)) problems.push(`${where}: function ${name} declared twice`);
  names.push(name);
  const params = d.parameters;
  const json = field(d, 'parametersJsonSchema');
  if (params !== undefined && json !== undefined) problems.push(`${where}: both parameters and parametersJsonSchema`);
  if (params !== undefined && (!isRecord(params) || String(params.type).toUpperCase() !== 'OBJECT')) {
    problems.push(`${where}: parameters is not a schema of type OBJECT`);
  }
  if (json !== undefined && (!isRecord(json) || json.type !== 'object')) {
    problems.push(`${where}: parametersJsonSchema does not describe an object`);
  }
  return problems;
}

function toolsOf(tools: unknown): { problems: string[]; names: string[] } {
  if (tools === undefined) return { problems: [], names: [] };
  if (!Array.isArray(tools)) return { problems: ['tools is not a list'], names: [] };
  const problems: string[] = [];
  const names: string[] = [];
  tools.forEach((t: unknown, i) => {
    if (!isRecord(t)) return problems.push(`tools[${i}] is not an object`);
    const decls = field(t, 'functionDeclarations');
    if (decls === undefined) return;
    if (!Array.isArray(decls)) return problems.push(`tools[${i}].functionDeclarations is not a list`);
    decls.forEach((d: unknown, k) => {
      const where = `tools[${i}].functionDeclarations[${k}]`;
      problems.push(...(isRecord(d) ? declarationProblems(d, where, names) : [`${where} is not an object`]));
    });
  });
  return { problems, names };
}

/** toolConfig.functionCallingConfig: its problems, the names it lets the model call, and its mode. */
function callingConfigOf(toolConfig: unknown, names: string[]) {
  const config = isRecord(toolConfig) ? field(toolConfig, 'functionCallingConfig') : undefined;
  if (!isRecord(config)) return { problems: [], callable: names };
  const mode = config.mode === undefined ? undefined : String(config.mode);
  const problems = mode !== undefined && !MODES.includes(mode) ? [`functionCallingConfig.mode ${mode} is unknown`] : [];
  const allowed = field(config, 'allowedFunctionNames');
  if (mode === 'NONE') return { problems, callable: [], mode };
  if (!Array.isArray(allowed)) return { problems, callable: names, ...(mode ? { mode } : {}) };
  if (mode !== 'ANY' && mode !== 'VALIDATED')
    problems.push('allowedFunctionNames is set without mode ANY or VALIDATED');
  const listed = allowed.map(String);
  for (const n of listed.filter((n) => !names.includes(n))) {
    problems.push(`allowedFunctionNames names ${n}, which the request does not declare`);
  }
  return { problems, callable: names.filter((n) => listed.includes(n)), ...(mode ? { mode } : {}) };
}

function read(headers: Record<string, string>, url: URL, body: unknown): DesktopRequest {
  const req = isRecord(body) ? body : {};
  const problems: string[] = isRecord(body) ? [] : ['the body is not a JSON object'];
  const count = { images: 0 };
  const contents = req.contents;
  if (!Array.isArray(contents) || contents.length === 0) problems.push('contents missing or empty');
  else contents.forEach((c: unknown, i) => problems.push(...contentProblems(c, `contents[${i}]`, count)));
  const system = field(req, 'systemInstruction');
  if (system !== undefined) problems.push(...contentProblems(system, 'systemInstruction', { images: 0 }, true));
  const tools = toolsOf(req.tools);
  const config = callingConfigOf(field(req, 'toolConfig'), tools.names);
  problems.push(...tools.problems, ...config.problems);
  const all = recordsOf(contents);
  const users = all.filter((c) => roleOf(c) === 'user');
  return {
    script: decodeURIComponent(PATH.exec(url.pathname)?.[1] ?? '').replace(/^models\//, ''),
    apiKey: headers[KEY_HEADER] || url.searchParams.get('key') || null,
    problems,
    toolNames: tools.names,
    callable: config.callable,
    ...(config.mode ? { toolChoice: config.mode } : {}),
    imageCount: count.images,
    userTexts: users.flatMap(textsOf),
    lastUserText: textsOf(users[users.length - 1]).join('\n'),
    allText: [...textsOf(isRecord(system) ? system : undefined), ...all.flatMap(textsOf)].join('\n'),
    messageCount: all.length,
  };
}

function usageOf(a: DesktopAnswer): GenerateContentResponseUsageMetadata | undefined {
  if (!a.usage) return undefined;
  const { input, output, cachedInput } = a.usage;
  return {
    promptTokenCount: input,
    candidatesTokenCount: output,
    totalTokenCount: input + output,
    ...(cachedInput !== undefined ? { cachedContentTokenCount: cachedInput } : {}),
  };
}

function response(candidates: Candidate[], ctx: DesktopAnswerContext, a?: DesktopAnswer) {
  const usageMetadata = a ? usageOf(a) : undefined;
  return {
    candidates,
    ...(usageMetadata ? { usageMetadata } : {}),
    modelVersion: ctx.script,
    responseId: `standin-desktop-${ctx.entry}`,
  };
}

/**
 * The answer as a generateContent response: one candidate whose content is `{role: 'model', parts}`, a text part
 * (when there is text) then one `functionCall` part per call, `finishReason: STOP`. Malformed: a candidate with
 * `finishReason: MALFORMED_FUNCTION_CALL`, a `finishMessage` quoting the call the model could not form, no content.
 */
function answer(a: DesktopAnswer, ctx: DesktopAnswerContext) {
  const first = a.calls[0];
  if (a.malformed && first) {
    const written = `${first.name}(${JSON.stringify(first.args).slice(0, -1)}`;
    const finishMessage = `Malformed function call: ${written}`;
    return response([{ index: 0, finishReason: FinishReason.MALFORMED_FUNCTION_CALL, finishMessage }], ctx, a);
  }
  const parts: Part[] = a.text === '' ? [] : [{ text: a.text }];
  for (const c of a.calls) parts.push({ functionCall: { name: c.name, args: c.args } });
  return response([{ index: 0, content: { role: 'model', parts }, finishReason: FinishReason.STOP }], ctx, a);
}

export const geminiDesktop: DesktopCallWire = {
  read,
  answer,
  empty: (ctx) => response([], ctx),
};
