// Specification of the desktop agent's calls in Anthropic's Messages API and Gemini's generateContent: which API an
// endpoint's family gets, the tool table as each API's function schema, the prompts' messages as each API's turns,
// and the calls read back from each response.
import { describe, expect, it } from 'vitest';

import { DESKTOP_TOOLS, describeMessages, desktopMessages, systemPrompt } from '../../src/desktop/agent';
import {
  DESKTOP_MAX_TOKENS,
  dataUrlParts,
  generateContentBody,
  generateContentProblem,
  generateContentToolCalls,
  messagesBody,
  messagesToolCalls,
} from '../../src/desktop/agent/provider-apis';
import { toolUseApi } from '../../src/families/family';
import { familyNames, familyOf } from '../../src/families/registry';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const describeCall = describeMessages({ objective: 'write a file', screenshotDataUrl: PNG });
const actionCall = desktopMessages([], {
  system: systemPrompt({ width: 1024, height: 768, tools: DESKTOP_TOOLS }),
  objective: 'write a file',
  description: 'An xterm.',
});

describe('desktop provider APIs: which API an endpoint gets', () => {
  it('is the family API for Anthropic and Gemini, chat completions for every other family', () => {
    const apis = Object.fromEntries(familyNames().map((n) => [n, toolUseApi(familyOf(n)) ?? 'chat']));
    expect(apis).toEqual({
      'fara-1.5': 'chat',
      'fara-7b': 'chat',
      'openai-computer': 'chat',
      'anthropic-computer': 'messages',
      'gemini-computer': 'generate-content',
      'ui-tars-1.5': 'chat',
      'qwen-vl': 'chat',
    });
    expect(toolUseApi(undefined)).toBeUndefined();
  });

  it('splits a data URL into its media type and payload, and nothing else', () => {
    expect(dataUrlParts(PNG)).toEqual({ mediaType: 'image/png', data: 'iVBORw0KGgo=' });
    expect(dataUrlParts('https://example.com/a.png')).toBeUndefined();
  });
});

describe('desktop provider APIs: Anthropic Messages', () => {
  it('turns the tool table into custom tools with the same JSON schemas', () => {
    const body = messagesBody(actionCall, DESKTOP_TOOLS);
    expect(body.tools?.map((t) => t.name)).toEqual(DESKTOP_TOOLS.map((t) => t.name));
    for (const [i, tool] of (body.tools ?? []).entries()) {
      expect(tool.input_schema).toBe(DESKTOP_TOOLS[i]?.parameters);
      expect(tool.input_schema).toMatchObject({ type: 'object' });
      expect(tool.description).toBe(DESKTOP_TOOLS[i]?.description);
    }
  });

  it('moves the system prompt to the top level and merges consecutive user messages into one turn', () => {
    const body = messagesBody(actionCall, DESKTOP_TOOLS);
    expect(body.system).toContain('run_command');
    expect(body.max_tokens).toBe(DESKTOP_MAX_TOKENS);
    expect(body.messages).toHaveLength(1);
    expect(body.messages[0]?.role).toBe('user');
    expect(body.messages[0]?.content.map((b) => b.type)).toEqual(['text', 'text']);
    expect(JSON.stringify(body.messages)).not.toContain('"system"');
  });

  it('sends a screenshot as a base64 image block and offers no tools to the vision call', () => {
    const body = messagesBody(describeCall);
    expect(body.tools).toBeUndefined();
    expect(body.messages[0]?.content[0]).toEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
    });
  });

  it('reads tool_use blocks as calls with JSON arguments, and nothing from text or thinking', () => {
    const native = {
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 's' },
        { type: 'text', text: 'Writing it.' },
        { type: 'tool_use', id: 'toolu_1', name: 'run_command', input: { command: 'ls' } },
        { type: 'tool_use', id: 'toolu_2', name: 'stop', input: { answer: 'done' } },
      ],
    };
    expect(messagesToolCalls(native)).toEqual([
      { name: 'run_command', arguments: '{"command":"ls"}' },
      { name: 'stop', arguments: '{"answer":"done"}' },
    ]);
    expect(messagesToolCalls({ content: [{ type: 'text', text: 'done' }] })).toEqual([]);
    expect(messagesToolCalls(null)).toEqual([]);
  });
});

describe('desktop provider APIs: Gemini generateContent', () => {
  it('declares the tool table as functions with their JSON schemas', () => {
    const body = generateContentBody(actionCall, DESKTOP_TOOLS);
    const declared = body.tools?.[0]?.functionDeclarations ?? [];
    expect(declared.map((f) => f.name)).toEqual(DESKTOP_TOOLS.map((t) => t.name));
    expect(declared[1]?.parametersJsonSchema).toBe(DESKTOP_TOOLS[1]?.parameters);
    expect(body.systemInstruction?.parts[0]?.text).toContain('run_command');
    expect(body.contents).toHaveLength(1);
    expect(body.contents[0]?.parts).toHaveLength(2);
  });

  it('sends a screenshot as inline data', () => {
    const body = generateContentBody(describeCall);
    expect(body.tools).toBeUndefined();
    expect(body.contents[0]?.parts[0]).toEqual({ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } });
  });

  it('reads functionCall parts as calls, and names a malformed function call as a problem', () => {
    const native = {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{ text: 'Typing.' }, { functionCall: { name: 'type_text', args: { text: 'hi' } } }],
          },
          finishReason: 'STOP',
        },
      ],
    };
    expect(generateContentToolCalls(native)).toEqual([{ name: 'type_text', arguments: '{"text":"hi"}' }]);
    expect(generateContentProblem(native)).toBeUndefined();
    const malformed = { candidates: [{ finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage: 'bad JSON' }] };
    expect(generateContentToolCalls(malformed)).toEqual([]);
    expect(generateContentProblem(malformed)).toMatch(/could not be read \(bad JSON\)/);
  });
});
