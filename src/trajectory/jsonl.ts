// Parsing of append-only .jsonl files, with the one kind of damage a crash can cause: a torn last line.
//
// Policy: every line ends with '\n' when written completely (the line and its newline go out in one write).
// - A complete line that is not valid JSON is corruption: CorruptFileError naming the file and line.
// - A last line with no '\n' that is not valid JSON is a torn write from a crash: it is dropped and reported.
// - A last line with no '\n' that is valid JSON lost only its newline: it is kept (and reported as unterminated).
import { CorruptFileError } from './errors';

export interface JsonlRecord {
  /** 1-based line number in the file. */
  line: number;
  value: unknown;
}

export interface TornTail {
  line: number;
  /** Byte length of the dropped fragment. */
  bytes: number;
}

export interface JsonlParse {
  records: JsonlRecord[];
  torn?: TornTail;
  /** Line number of a valid last line that lacks its '\n'. */
  unterminatedLine?: number;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error };
  }
}

export function parseJsonl(text: string, file: string, firstLine = 1): JsonlParse {
  const pieces = text.split('\n');
  const tail = pieces.pop() ?? ''; // '' when the text ends with '\n'
  const result: JsonlParse = { records: [] };
  pieces.forEach((piece, index) => {
    if (piece.trim() === '') return;
    const line = firstLine + index;
    const parsed = tryParse(piece);
    if (!parsed.ok) throw new CorruptFileError(file, line, 'not valid JSON', { cause: parsed.error });
    result.records.push({ line, value: parsed.value });
  });
  if (tail.trim() === '') return result;
  const line = firstLine + pieces.length;
  const parsed = tryParse(tail);
  if (parsed.ok) {
    result.records.push({ line, value: parsed.value });
    result.unterminatedLine = line;
  } else {
    result.torn = { line, bytes: Buffer.byteLength(tail) };
  }
  return result;
}

/** Split a chunk read from a byte offset into its complete lines and the bytes after the last '\n'. */
export function splitComplete(chunk: Buffer): { complete: string; completeBytes: number; rest: Buffer } {
  const end = chunk.lastIndexOf(0x0a) + 1;
  return { complete: chunk.subarray(0, end).toString('utf8'), completeBytes: end, rest: chunk.subarray(end) };
}
