// The cache key: every request field classified, equal keys for requests that mean the same,
// different keys for any change of a field that changes the answer.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { CACHE_KEY_FIELD_NAMES, CACHE_KEY_FIELDS } from '../../../src/gateway/cache/cache-key-fields.ts';
import { canonicalizeCacheRequest, computeCacheKey, stringifyCanonical } from '../../../src/gateway/cache/compute-cache-key.ts';
import { validateChatRequest } from '../../../src/gateway/ingress/openai-chat/validate-chat-request.ts';

const MODEL = 'gpt-4.1';
const key = (request: ChatRequest, model = MODEL) => computeCacheKey({ request, model });
const wire = (body: Record<string, unknown>) => validateChatRequest({ model: 'gpt4', messages: [{ role: 'user', content: 'Hi' }], ...body });

const TOOL = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

/** A request that sets every key field, so each variant below changes exactly one thing. */
const BASE = wire({
  temperature: 0,
  top_p: 0.5,
  max_tokens: 100,
  max_completion_tokens: 90,
  stop: ['END'],
  n: 1,
  seed: 7,
  tools: [TOOL],
  tool_choice: 'auto',
  parallel_tool_calls: true,
  response_format: { type: 'json_object' },
  presence_penalty: 0.5,
  frequency_penalty: 0.5,
  logprobs: true,
  top_logprobs: 2,
  logit_bias: { 50256: -100 },
  reasoning_effort: 'low',
  verbosity: 'low',
});

/** One change per key field; a new key field without a variant fails the coverage test. */
const KEY_VARIANTS: Record<string, Record<string, unknown>> = {
  messages: { messages: [{ role: 'user', content: 'Hi!' }] },
  temperature: { temperature: 0.2 },
  top_p: { top_p: 0.6 },
  max_tokens: { max_tokens: 101 },
  max_completion_tokens: { max_completion_tokens: 91 },
  stop: { stop: ['STOP'] },
  n: { n: 2 },
  tools: { tools: [{ ...TOOL, function: { ...TOOL.function, description: 'Weather now' } }] },
  tool_choice: { tool_choice: 'required' },
  parallel_tool_calls: { parallel_tool_calls: false },
  response_format: { response_format: { type: 'text' } },
  seed: { seed: 8 },
  presence_penalty: { presence_penalty: 0.6 },
  frequency_penalty: { frequency_penalty: 0.6 },
  logprobs: { logprobs: false, top_logprobs: undefined },
  top_logprobs: { top_logprobs: 3 },
  logit_bias: { logit_bias: { 50256: -99 } },
  reasoning_effort: { reasoning_effort: 'high' },
  verbosity: { verbosity: 'high' },
};

/** Fields only the Anthropic Messages decoder sets (the OpenAI validator refuses them), changed on the request itself. */
const ANTHROPIC_ONLY_VARIANTS: Record<string, Partial<ChatRequest>> = {
  top_k: { top_k: 5 },
  thinking: { thinking: { type: 'enabled', budget_tokens: 1024 } },
  anthropic_headers: { anthropic_headers: { beta: 'interleaved-thinking-2025-05-14' } },
  // Set by every tolerant decoder for what it does not model (the fields themselves reach same-dialect upstreams).
  unmodeled: { unmodeled: [{ param: 'client_metadata', bridged: 'drop', reason: 'test', value: { a: 1 } }] },
};

const IGNORED_VARIANTS: Record<string, Record<string, unknown>> = {
  stream: { stream: true },
  stream_options: { stream: true, stream_options: { include_usage: true } },
  user: { user: 'u-1' },
  safety_identifier: { safety_identifier: 'hash-1' },
  metadata: { metadata: { team: 'a' } },
  store: { store: true },
  service_tier: { service_tier: 'flex' },
  prompt_cache_key: { prompt_cache_key: 'pk' },
};

/** Ignored fields only the Anthropic Messages decoder sets. */
const ANTHROPIC_ONLY_IGNORED: Record<string, Partial<ChatRequest>> = {
  cache_control: { cache_control: { type: 'ephemeral' } },
};

describe('cache key fields', () => {
  it('classify every field the request validator accepts (a new one cannot be forgotten)', () => {
    // validate-chat-request.ts keeps its KNOWN_KEYS private; read the literal from the source.
    const source = readFileSync('src/gateway/ingress/openai-chat/validate-chat-request.ts', 'utf8');
    const literal = /const KNOWN_KEYS = new Set\(\[([^\]]*)\]\)/.exec(source);
    assert.ok(literal, 'KNOWN_KEYS literal not found in validate-chat-request.ts');
    const accepted = [...literal[1]!.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]).sort();
    assert.deepEqual(Object.keys(CACHE_KEY_FIELDS).sort(), [...accepted, ...Object.keys(ANTHROPIC_ONLY_VARIANTS), ...Object.keys(ANTHROPIC_ONLY_IGNORED)].sort());
  });

  it('have a key variant for every key field and an ignored variant for every other field', () => {
    assert.deepEqual([...Object.keys(KEY_VARIANTS), ...Object.keys(ANTHROPIC_ONLY_VARIANTS)].sort(), CACHE_KEY_FIELD_NAMES.filter((n) => n !== 'model').sort());
    const ignored = Object.keys(CACHE_KEY_FIELDS).filter((n) => CACHE_KEY_FIELDS[n as keyof ChatRequest].role === 'ignored');
    assert.deepEqual([...Object.keys(IGNORED_VARIANTS), ...Object.keys(ANTHROPIC_ONLY_IGNORED)].sort(), ignored.sort());
  });
});

describe('computeCacheKey', () => {
  const base = key(BASE);

  it('is a SHA-256 hex digest, stable across calls', () => {
    assert.match(base, /^[0-9a-f]{64}$/);
    assert.equal(key(wire({ ...bodyOf(BASE) })), base);
  });

  for (const [field, change] of Object.entries(KEY_VARIANTS)) {
    it(`changes with ${field}`, () => {
      assert.notEqual(key(wire({ ...bodyOf(BASE), ...change })), base);
    });
  }

  for (const [field, change] of Object.entries(ANTHROPIC_ONLY_VARIANTS)) {
    it(`changes with ${field}`, () => {
      assert.notEqual(key({ ...BASE, ...change }), base);
    });
  }

  it('ignores anthropic-version and cache_control: they change the wire format and the cost, not the answer', () => {
    assert.equal(key({ ...BASE, anthropic_headers: { version: '2023-06-01' } }), base);
    assert.equal(key({ ...BASE, ...ANTHROPIC_ONLY_IGNORED.cache_control }), base);
  });

  for (const [field, change] of Object.entries(IGNORED_VARIANTS)) {
    it(`ignores ${field}`, () => {
      assert.equal(key(wire({ ...bodyOf(BASE), ...change })), base);
    });
  }

  it('uses the canonical model, not the name sent: aliases share entries, other models do not', () => {
    assert.equal(key(wire({ model: 'gpt4', temperature: 0 })), key(wire({ model: 'gpt-4.1', temperature: 0 })));
    assert.notEqual(key(BASE, 'gpt-4.1'), key(BASE, 'deepseek-v3.2'));
  });

  it('separates partitions when one is given', () => {
    const request = wire({ temperature: 0 });
    assert.equal(computeCacheKey({ request, model: MODEL }), computeCacheKey({ request, model: MODEL, partition: undefined }));
    assert.notEqual(computeCacheKey({ request, model: MODEL, partition: 'team-a' }), computeCacheKey({ request, model: MODEL }));
    assert.notEqual(computeCacheKey({ request, model: MODEL, partition: 'team-a' }), computeCacheKey({ request, model: MODEL, partition: 'team-b' }));
  });

  it('keeps a legacy completions prompt apart from the chat turn it decodes to, and leaves other keys as they were', () => {
    const request = wire({ temperature: 0 });
    assert.equal(computeCacheKey({ request, model: MODEL }), computeCacheKey({ request, model: MODEL, space: undefined }));
    assert.notEqual(computeCacheKey({ request, model: MODEL, space: 'completions' }), computeCacheKey({ request, model: MODEL }));
  });

  // Each pair: two spellings of the same request (see the notes in cache-key-fields.ts).
  const EQUIVALENT: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['body key order', { temperature: 0, seed: 1 }, { seed: 1, temperature: 0 }],
    ['stop string vs one-item list', { stop: 'END' }, { stop: ['END'] }],
    ['empty stop list vs none', { stop: [] }, {}],
    ['n 1 vs none', { n: 1 }, {}],
    ['penalties 0 vs none', { presence_penalty: 0, frequency_penalty: 0 }, {}],
    ['logprobs false vs none', { logprobs: false }, {}],
    ['logit_bias {} vs none', { logit_bias: {} }, {}],
    ['logit_bias order', { logit_bias: { 1: 1, 2: 2 } }, { logit_bias: { 2: 2, 1: 1 } }],
    ['response_format text vs none', { response_format: { type: 'text' } }, {}],
    ['empty tools vs none', { tools: [] }, {}],
    ['tool_choice auto vs none (with tools)', { tools: [TOOL], tool_choice: 'auto' }, { tools: [TOOL] }],
    ['parallel_tool_calls true vs none (with tools)', { tools: [TOOL], parallel_tool_calls: true }, { tools: [TOOL] }],
    ['parallel_tool_calls without tools', { parallel_tool_calls: false }, {}],
    ['tool strict false vs none', { tools: [{ ...TOOL, function: { ...TOOL.function, strict: false } }] }, { tools: [TOOL] }],
    ['one text part vs string', { messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] }, {}],
    [
      'image detail auto vs none',
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x' },
              { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'auto' } },
            ],
          },
        ],
      },
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x' },
              { type: 'image_url', image_url: { url: 'https://x/y.png' } },
            ],
          },
        ],
      },
    ],
    [
      'assistant refusal null vs none',
      {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b', refusal: null },
          { role: 'user', content: 'c' },
        ],
      },
      {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: 'c' },
        ],
      },
    ],
    ['message key order', { messages: [{ content: 'Hi', role: 'user' }] }, {}],
  ];
  for (const [name, a, b] of EQUIVALENT) {
    it(`equal for ${name}`, () => {
      assert.equal(key(wire({ temperature: 0, ...a })), key(wire({ temperature: 0, ...b })));
    });
  }

  // Spellings that look alike but can get different answers from some upstream: kept apart.
  const DISTINCT: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['max_tokens vs max_completion_tokens', { max_tokens: 10 }, { max_completion_tokens: 10 }],
    ['top_p 1 vs none (Gemini defaults to 0.95)', { top_p: 1 }, {}],
    ['temperature 1 vs none', { temperature: 1 }, { temperature: undefined }],
    ['system vs developer', { messages: [{ role: 'system', content: 'Hi' }] }, { messages: [{ role: 'developer', content: 'Hi' }] }],
    [
      'two text parts vs their concatenation',
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'H' },
              { type: 'text', text: 'i' },
            ],
          },
        ],
      },
      {},
    ],
    [
      'schema property order (structured outputs follow it)',
      { response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object', properties: { a: {}, b: {} } } } } },
      { response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object', properties: { b: {}, a: {} } } } } },
    ],
    ['tool order', { tools: [TOOL, { ...TOOL, function: { name: 'other' } }] }, { tools: [{ ...TOOL, function: { name: 'other' } }, TOOL] }],
    ['stop order', { stop: ['a', 'b'] }, { stop: ['b', 'a'] }],
    ['message name', { messages: [{ role: 'user', content: 'Hi', name: 'bob' }] }, {}],
  ];
  for (const [name, a, b] of DISTINCT) {
    it(`different for ${name}`, () => {
      assert.notEqual(key(wire({ temperature: 0, ...a })), key(wire({ temperature: 0, ...b })));
    });
  }

  it('keeps tool-call history (ids and arguments) in the key', () => {
    const history = (id: string, args: string) => ({
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: args } }] },
        { role: 'tool', tool_call_id: id, content: '20C' },
      ],
      tools: [TOOL],
    });
    const a = key(wire({ temperature: 0, ...history('call_1', '{"city":"Paris"}') }));
    assert.equal(a, key(wire({ temperature: 0, ...history('call_1', '{"city":"Paris"}') })));
    assert.notEqual(a, key(wire({ temperature: 0, ...history('call_2', '{"city":"Paris"}') })));
    assert.notEqual(a, key(wire({ temperature: 0, ...history('call_1', '{"city":"Rome"}') })));
  });

  it('hashes a canonical JSON with sorted keys, no undefined members, and the model in place of the name sent', () => {
    const text = canonicalizeCacheRequest({ request: wire({ temperature: 0 }), model: MODEL });
    assert.equal(text, '{"fields":{"messages":[{"content":"Hi","role":"user"}],"model":"gpt-4.1","temperature":0},"v":1}');
    assert.equal(stringifyCanonical({ b: 1, a: [undefined, { d: undefined, c: 'x' }] }), '{"a":[null,{"c":"x"}],"b":1}');
    assert.throws(() => stringifyCanonical({ a: Number.NaN }));
  });
});

/** The wire body that validates to this request (for variants on top of BASE). */
function bodyOf(request: ChatRequest): Record<string, unknown> {
  return JSON.parse(JSON.stringify(request)) as Record<string, unknown>;
}
