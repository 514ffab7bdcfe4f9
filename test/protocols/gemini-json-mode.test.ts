// gemini-cli's JSON-mode model router (its first call: `responseMimeType: application/json` with
// a `responseJsonSchema` whose type names are @google/genai's capitals) read by the Gemini door and
// built for each provider: structured output where the target's can hold the schema, else the
// schema asked for in words in the system prompt (README, "Gemini door").
import { describe, expect, it } from 'vitest';
import type { Target } from '../../src/providers/ir/protocol.js';
import { geminiClient } from '../../src/providers/protocols/gemini/client/index.js';
import { anthropicProvider } from '../../src/providers/protocols/anthropic/provider/index.js';
import { openaiChatProvider } from '../../src/providers/protocols/openai-chat/provider/index.js';
import { openaiResponsesProvider } from '../../src/providers/protocols/openai-responses/provider/index.js';

const ANTHROPIC: Target = { provider: 'anthropic', displayName: 'Anthropic', model: 'claude-sonnet-4-5', protocol: 'anthropic' };
const OPENAI: Target = { provider: 'openai', displayName: 'OpenAI', model: 'gpt-5.4', protocol: 'openai-chat' };
const OPENAI_RSP: Target = { ...OPENAI, model: 'gpt-5.4-pro', protocol: 'openai-responses' };

// As gemini-cli's classifier strategy sends it (Type.OBJECT, Type.STRING inside a JSON Schema).
const ROUTER_SCHEMA = {
  type: 'OBJECT',
  properties: {
    reasoning: { type: 'STRING', description: 'A brief, step-by-step explanation for the model choice.' },
    model_choice: { type: 'STRING', enum: ['flash', 'pro'] },
  },
  required: ['reasoning', 'model_choice'],
};
const routerRequest = (schema: unknown) => ({
  contents: [{ role: 'user', parts: [{ text: 'list the files here' }] }],
  systemInstruction: { role: 'user', parts: [{ text: 'You are a specialized Task Routing AI.' }] },
  generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema, temperature: 0 },
});
const LOWERED = {
  type: 'object',
  properties: {
    reasoning: { type: 'string', description: 'A brief, step-by-step explanation for the model choice.' },
    model_choice: { type: 'string', enum: ['flash', 'pro'] },
  },
  required: ['reasoning', 'model_choice'],
};

const anthropicBody = (body: unknown) => anthropicProvider.buildRequest(geminiClient.parseRequest(body, ANTHROPIC), ANTHROPIC).body as Record<string, any>;
const chatBody = (body: unknown) => openaiChatProvider.buildRequest(geminiClient.parseRequest(body, OPENAI), OPENAI).body as Record<string, any>;
const responsesBody = (body: unknown) => openaiResponsesProvider.buildRequest(geminiClient.parseRequest(body, OPENAI_RSP), OPENAI_RSP).body as Record<string, any>;

describe('gemini-cli\'s JSON-mode router through the Gemini door', () => {
  it('reaches Claude as structured output: type names lowered, every object closed', () => {
    const b = anthropicBody(routerRequest(ROUTER_SCHEMA));
    expect(b.output_config).toEqual({ format: { type: 'json_schema', schema: { ...LOWERED, additionalProperties: false } } });
    expect(JSON.stringify(b.system)).not.toContain('JSON Schema');
  });

  it('reaches GPT as structured output, on Chat and on Responses', () => {
    expect(chatBody(routerRequest(ROUTER_SCHEMA)).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema: LOWERED } });
    expect(responsesBody(routerRequest(ROUTER_SCHEMA)).text).toEqual({ format: { type: 'json_schema', name: 'response', schema: LOWERED, strict: false } });
  });

  it('constraints Claude\'s structured outputs refuse are said in the description instead', () => {
    const schema = { type: 'object', properties: { score: { type: 'INTEGER', minimum: 1, maximum: 100, description: 'Complexity score.' }, tags: { type: 'array', items: { type: 'string', maxLength: 20 }, minItems: 2 } } };
    const sent = anthropicBody(routerRequest(schema)).output_config.format.schema;
    expect(sent.properties.score).toEqual({ type: 'integer', description: 'Complexity score. (minimum: 1, maximum: 100)' });
    expect(sent.properties.tags).toEqual({ type: 'array', items: { type: 'string', description: '(maxLength: 20)' }, description: '(minItems: 2)' });
  });

  it('a schema the target cannot hold is asked for in words: an open object for Claude, a root array for GPT', () => {
    const open = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } };
    const claude = anthropicBody(routerRequest(open));
    expect(claude).not.toHaveProperty('output_config');
    expect(claude.system.at(-1).text).toContain(JSON.stringify(open));

    const list = { type: 'ARRAY', items: { type: 'OBJECT', properties: { name: { type: 'STRING' } } } };
    const chat = chatBody(routerRequest(list));
    expect(chat).not.toHaveProperty('response_format');
    expect(chat.messages[0]).toEqual({ role: 'system', content: expect.stringContaining('{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}}') });
    expect(chat.messages[0].content).toMatch(/^You are a specialized Task Routing AI\.\n\nRespond with only JSON/);
    const responses = responsesBody(routerRequest(list));
    expect(responses).not.toHaveProperty('text');
    expect(responses.instructions).toContain('"type":"array"');
  });

  it('function declarations\' parametersJsonSchema gets lowered type names too', () => {
    const b = chatBody({ ...routerRequest(ROUTER_SCHEMA), tools: [{ functionDeclarations: [{ name: 'ls', parametersJsonSchema: { type: 'OBJECT', properties: { dir: { type: ['STRING', 'NULL'] } } } }] }] });
    expect(b.tools[0].function.parameters).toEqual({ type: 'object', properties: { dir: { type: ['string', 'null'] } } });
  });
});
