// Shared by the openai-computer family's tests: the family, the screen, PNG data URLs told apart by their ref, and the
// stand-in's responses to scripted turns with their records.
import type { Response } from 'openai/resources/responses/responses';
import { OPENAI_COMPUTER_FAMILY } from '../../src/families/openai-computer/family';
import type { ParsedOutput } from '../../src/model/parse';
import { openAiResponse } from '../../src/scripted/providers/openai-responses';
import type { OpenAiResponseContext } from '../../src/scripted/providers/openai-responses';
import type { ScreenAction, StandInOutput } from '../../src/scripted/providers/output';

export const family = OPENAI_COMPUTER_FAMILY;
export const screen = { width: 1440, height: 900 };
export const HEADERS = { authorization: 'Bearer sk-test' };

/** A PNG data URL whose header says w×h, with the ref after the header so each screenshot is told apart. */
export function png(w: number, h: number, ref = ''): string {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return `data:image/png;base64,${Buffer.concat([b, Buffer.from(ref)]).toString('base64')}`;
}
export const shot = (ref: string): string => png(screen.width, screen.height, ref);

export const act = (actions: ScreenAction[], more: Partial<StandInOutput> = {}): StandInOutput => ({
  thoughts: '',
  actions,
  ...more,
});
export const click = (x: number, y: number): ScreenAction => ({ kind: 'click', button: 'left', count: 1, x, y });

let sequence = 0;
/** The stand-in's response to a scripted turn (GA unless told), with encrypted reasoning as our request asks. */
export function respond(scripted: StandInOutput, ctx: Partial<OpenAiResponseContext> = {}): Response {
  sequence += 1;
  const base: OpenAiResponseContext = { tool: 'computer', screenshot: screen, sequence, encryptedReasoning: true };
  return openAiResponse(scripted, { ...base, ...ctx }) as Response;
}
export const recorded = (body: unknown): string => family.outputText?.({ text: '', native: body }) ?? '';
export const read = (body: unknown): ParsedOutput =>
  family.read({ text: '', native: body }, { screen, allowed: family.allowedActions, terminateOnParseError: false });
