// Fuzz target: valid OpenAI chat, Responses and completions requests with random unknown members added at every
// level. The decoders never refuse them and record each one (or a recorded ancestor) in `unmodeled`; the
// pass-through body carries every one as sent; bridging (the refusal check, then the OpenAI, Anthropic and Gemini
// conversions) returns or fails with a 4xx HerdError only.
import fc from 'fast-check';
import type { JsonObject } from '../../src/gateway/protocol/check-json-value.ts';
import type { ChatRequest } from '../../src/gateway/protocol/chat-types.ts';
import { decodeCompletionsRequest } from '../../src/gateway/ingress/openai-completions/completions-codec.ts';
import { decodeResponsesRequest } from '../../src/gateway/ingress/openai-responses/decode-responses-request.ts';
import { convertAnthropicRequest } from '../../src/gateway/providers/anthropic/convert-anthropic-request.ts';
import { bridgeUnmodeled } from '../../src/gateway/providers/bridge-unmodeled.ts';
import { convertGeminiRequest } from '../../src/gateway/providers/gemini/convert-gemini-request.ts';
import { convertOpenAIRequest } from '../../src/gateway/providers/openai/convert-openai-request.ts';
import { createPassThroughBody } from '../../src/gateway/wire/openai-chat/create-pass-through-body.ts';
import { validateChatRequest } from '../../src/gateway/ingress/openai-chat/validate-chat-request.ts';
import { type JsonObjectNode, listJsonObjects, valueAt } from './json-object-walk.ts';
import { type FuzzTarget, parseOrReject } from './fuzz-target.ts';

const fn = { type: 'function', function: { name: 'read', description: 'Read', parameters: { type: 'object' }, strict: true } };

/** Valid requests per dialect, covering the members and shapes each decoder reads. */
const BASES: Array<{ dialect: 'chat' | 'responses' | 'completions'; body: JsonObject }> = [
  { dialect: 'chat', body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } },
  {
    dialect: 'chat',
    body: {
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.5,
      response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object' }, strict: true } },
      tools: [fn, { type: 'custom', custom: { name: 'patch', format: { type: 'grammar', grammar: { definition: 'start: /.+/', syntax: 'lark' } } } }],
      tool_choice: { type: 'function', function: { name: 'read' } },
      metadata: { a: 'b' },
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'Rules.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look.' },
            { type: 'image_url', image_url: { url: 'https://x/a.png', detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'text', text: 'Reading.' }],
          reasoning_content: 'Hm.',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } },
            { id: 'c2', type: 'custom', custom: { name: 'patch', input: 'x' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'ok' }] },
        { role: 'tool', tool_call_id: 'c2', content: 'done' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
      ],
    },
  },
  { dialect: 'responses', body: { model: 'm', input: 'hi' } },
  {
    dialect: 'responses',
    body: {
      model: 'm',
      instructions: 'Be brief.',
      stream: true,
      store: false,
      reasoning: { effort: 'low' },
      text: { format: { type: 'json_schema', name: 'a', schema: { type: 'object' } }, verbosity: 'low' },
      tools: [
        { type: 'function', name: 'read', parameters: { type: 'object' } },
        {
          type: 'namespace',
          name: 'ns',
          description: 'd',
          tools: [
            { type: 'function', name: 'list' },
            { type: 'custom', name: 'patch', format: { type: 'text' } },
          ],
        },
        { type: 'web_search' },
      ],
      tool_choice: { type: 'function', name: 'read' },
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Rules.' }] },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look.' },
            { type: 'input_image', image_url: 'https://x/a.png', detail: 'original' },
          ],
        },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Hm.' }], encrypted_content: 'gAAAA' },
        { type: 'function_call', call_id: 'c1', namespace: 'ns', name: 'list', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'ok' }] },
        { type: 'custom_tool_call', call_id: 'c2', name: 'patch', input: 'x' },
        { type: 'custom_tool_call_output', call_id: 'c2', output: 'done' },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] },
      ],
    },
  },
  { dialect: 'completions', body: { model: 'm', prompt: 'Say hi', max_tokens: 5, stream: true, stream_options: { include_usage: true }, echo: false } },
];

/** Members whose values are the client's own data (schemas, maps), not members Herd could model. */
const VERBATIM = new Set(['parameters', 'schema', 'metadata', 'logit_bias']);
const KEYS = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/).map((s) => `x_${s}`),
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'tools[type=web_search]', '(unknown member)', '*', 'ünïcode', ''),
);

function decode(dialect: 'chat' | 'responses' | 'completions', body: JsonObject): ChatRequest {
  if (dialect === 'chat') return validateChatRequest(body);
  if (dialect === 'responses') return decodeResponsesRequest(body).request;
  return decodeCompletionsRequest(body).request;
}

export function createOpenAIUnknownMembersTarget(): FuzzTarget {
  return {
    name: 'openai chat, responses, completions: unknown members at every level',
    open: async () => ({
      arbitrary: fc.record({
        base: fc.nat({ max: BASES.length - 1 }),
        insertions: fc.array(fc.record({ node: fc.nat(), key: KEYS, value: fc.jsonValue({ maxDepth: 2 }) }), { minLength: 1, maxLength: 8 }),
      }),
      check: (input: unknown) => {
        const { base, insertions } = input as { base: number; insertions: Array<{ node: number; key: string; value: unknown }> };
        const { dialect, body: original } = BASES[base] as (typeof BASES)[number];
        const body = structuredClone(original);
        const nodes = listJsonObjects(body, VERBATIM);
        const added: Array<{ path: string; keys: string[]; value: unknown }> = [];
        for (const { node, key, value } of insertions) {
          const target = nodes[node % nodes.length] as JsonObjectNode;
          if (Object.hasOwn(target.object, key)) continue;
          // defineProperty: a plain assignment to `__proto__` would set the prototype, not add a member as JSON.parse does.
          Object.defineProperty(target.object, key, { value, enumerable: true, writable: true, configurable: true });
          const keys = [...target.keys, key];
          added.push({ path: keys.join('.'), keys, value });
        }
        const request = decode(dialect, body);
        const params = (request.unmodeled ?? []).map((f) => f.param);
        for (const { path, value } of added) {
          if (value === null) continue;
          if (!params.some((p) => path === p || path.startsWith(`${p}.`))) throw new Error(`'${path}' was neither carried nor recorded; unmodeled: ${JSON.stringify(params)}`);
        }
        const sent = JSON.parse(JSON.stringify(createPassThroughBody(body, 'upstream-model', body.stream === true))) as unknown;
        for (const { path, keys, value } of added) {
          if (JSON.stringify(valueAt(sent, keys)) !== JSON.stringify(value)) throw new Error(`pass-through lost '${path}'`);
        }
        parseOrReject(() => bridgeUnmodeled({ request, upstreamModel: 'up' }, 'anthropic'), ['UNSUPPORTED']);
        parseOrReject(() => bridgeUnmodeled({ request, upstreamModel: 'up', strict: true }, 'anthropic'), ['UNSUPPORTED']);
        parseOrReject(() => convertOpenAIRequest(request, 'up', request.stream === true), ['INVALID_ARG', 'UNSUPPORTED']);
        parseOrReject(() => convertAnthropicRequest(request, 'claude-up', { defaultMaxTokens: 1024, stream: request.stream === true }), ['INVALID_ARG', 'UNSUPPORTED']);
        parseOrReject(() => convertGeminiRequest(request, 'gemini-2.5-flash'), ['INVALID_ARG', 'UNSUPPORTED']);
      },
      close: async () => {},
    }),
  };
}
