// Specification of the desktop agent's prompts: the action model's system prompt, the vision model's describe
// request and the reading of its answer, and the grounding request.
import { describe, expect, it } from 'vitest';

import {
  DESKTOP_TOOLS,
  describeMessages,
  groundingMessages,
  readDescription,
  systemPrompt,
} from '../../src/desktop/agent';

describe('systemPrompt', () => {
  const prompt = systemPrompt({ width: 1280, height: 800, tools: DESKTOP_TOOLS });

  it.each([
    ['the screen size', '1280×800'],
    ['that it reads a description, not the image', 'You cannot see the screen'],
    ['that calls run in order', 'in the order given'],
    ['to prefer run_command', 'prefer run_command'],
    ['the default timeout', 'after 5 seconds'],
    ['background commands and their log', 'run_background_command; their output goes to a log file'],
    ['to click by description', 'Click by describing the target'],
    ['when to ask the user', 'Call ask_user only when'],
    ['to stop with the final answer', 'call stop with the final answer'],
  ])('says %s', (_case, fragment) => {
    expect(prompt).toContain(fragment);
  });

  it('lists every tool with its usage', () => {
    for (const tool of DESKTOP_TOOLS) expect(prompt).toContain(`- ${tool.usage}: `);
  });
});

describe('describeMessages', () => {
  it('sends the screenshot and asks for the four-part form', () => {
    const messages = describeMessages({ objective: 'Save the file', screenshotDataUrl: 'data:image/png;base64,AAA' });
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    const user = messages[1];
    const parts = Array.isArray(user?.content) ? user.content : [];
    expect(parts[0]).toEqual({ type: 'image_url', image_url: { url: 'data:image/png;base64,AAA' } });
    const text = parts[1]?.type === 'text' ? parts[1].text : '';
    expect(text).toContain('The objective: Save the file');
    for (const label of ['1. Objective:', '2. Screen:', '3. Status: DONE or NOT DONE', '4. Next:']) {
      expect(text).toContain(label);
    }
    expect(text).toContain('each visible window');
    expect(text).not.toContain('Since the last screenshot');
  });

  it('adds what happened since the last look when given', () => {
    const [, user] = describeMessages({ objective: 'x', screenshotDataUrl: 'u', previous: 'clicked "Save"' });
    expect(JSON.stringify(user?.content)).toContain('Since the last screenshot: clicked \\"Save\\"');
  });
});

describe('readDescription', () => {
  const form = (status: string) =>
    `1. Objective: save the file.\n2. Screen: an editor; the title says "notes.txt — done editing".\n3. ${status}\n4. Next: press ctrl+s.`;

  it.each<[string, string, boolean | null]>([
    ['status NOT DONE', form('Status: NOT DONE — the title still has an asterisk.'), false],
    ['status DONE', form('Status: DONE — the file is saved.'), true],
    ['status done, lower case', form('Status: done.'), true],
    ['status not yet done', form('Status: the objective is not yet done.'), false],
    ['status incomplete', form('Status: incomplete, the dialog is open.'), false],
    ['status complete', form('Status: complete'), true],
    ['status has not been achieved', form('Status: it has not been achieved.'), false],
    ['a status starting with its verdict wins', form('Status: DONE — nothing is incomplete.'), true],
    ['markdown labels', '**Objective:** x\n**Screen:** y\n**Status:** NOT DONE\n**Next:** z', false],
    ['a numbered part without a label', '1. x\n2. y\n3. The objective is complete.\n4. nothing', true],
    ['a status over two lines', '3. Status:\nNOT DONE\n4. Next: type', false],
    ['no parts, a sentence', 'The editor is open. The task has not been completed yet.', false],
    ['no parts, the objective is done', 'All good: the objective is done.', true],
    ['unclear', 'An editor window with some text. Next, when ready, save.', null],
    ['a status without verdict', form('Status: hard to say.'), null],
    ['"done" only in the screen part', form('Status: unclear'), null],
  ])('%s', (_case, text, done) => {
    expect(readDescription(text).done).toBe(done);
  });

  it('keeps the text, trimmed, without a think section', () => {
    expect(readDescription('<think>looking…</think>\n  3. Status: DONE \n')).toEqual({
      text: '3. Status: DONE',
      done: true,
    });
  });
});

describe('groundingMessages', () => {
  it('sends the screenshot and asks for the pixel point of the element', () => {
    const messages = groundingMessages({
      screenshotDataUrl: 'data:image/png;base64,BBB',
      query: 'the "OK" button',
      width: 1280,
      height: 800,
    });
    expect(messages).toHaveLength(1);
    const parts = Array.isArray(messages[0]?.content) ? messages[0].content : [];
    expect(parts[0]).toEqual({ type: 'image_url', image_url: { url: 'data:image/png;base64,BBB' } });
    const text = parts[1]?.type === 'text' ? parts[1].text : '';
    expect(text).toContain('1280×800 pixels');
    expect(text).toContain('"the \\"OK\\" button"');
    expect(text).toContain('(x, y)');
  });
});
