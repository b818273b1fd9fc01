// Fuzz target: valid Anthropic Messages requests with random unknown members added at every level. The
// decoder never refuses them and records each one (or a dropped ancestor) in `unmodeled`; pass-through
// forwards every one as sent; the bridged conversions (OpenAI-compatible, Gemini) return or refuse with a 4xx HerdError.
import fc from 'fast-check';
import type { JsonObject } from '../../src/gateway/protocol/check-json-value.ts';
import type { ChatRequest } from '../../src/gateway/protocol/chat-types.ts';
import { decodeMessagesRequest } from '../../src/gateway/ingress/anthropic-messages/decode-messages-request.ts';
import { convertPassThroughBody } from '../../src/gateway/providers/anthropic/anthropic-provider.ts';
import { bridgeUnmodeled } from '../../src/gateway/providers/bridge-unmodeled.ts';
import { convertGeminiRequest } from '../../src/gateway/providers/gemini/convert-gemini-request.ts';
import { convertOpenAIRequest } from '../../src/gateway/providers/openai/convert-openai-request.ts';
import { type JsonObjectNode, listJsonObjects, valueAt } from './json-object-walk.ts';
import { type FuzzTarget, parseOrReject } from './fuzz-target.ts';

const png = { type: 'base64', media_type: 'image/png', data: 'iVBORw0=' };
const text = (t: string) => ({ type: 'text', text: t });

/** Valid requests covering every block family, tool kind and setting the decoder reads. */
const BASES: JsonObject[] = [
  { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
  {
    model: 'm',
    max_tokens: 100,
    stream: true,
    system: [{ ...text('Rules.'), cache_control: { type: 'ephemeral', ttl: '1h' } }],
    metadata: { user_id: 'u' },
    temperature: 0.5,
    stop_sequences: ['END'],
    thinking: { type: 'enabled', budget_tokens: 0 },
    output_config: { effort: 'high', format: { type: 'json_schema', schema: { type: 'object' } } },
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    tools: [
      { name: 'read', description: 'Read', input_schema: { type: 'object' }, strict: true, cache_control: { type: 'ephemeral' } },
      { type: 'web_search_20250305', name: 'web_search' },
      { type: 'bash_20250124', name: 'bash' },
    ],
    messages: [
      { role: 'user', content: [text('Look.'), { type: 'image', source: png }, { type: 'image', source: { type: 'url', url: 'https://x/a.png' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Hm.', signature: 's' },
          { type: 'redacted_thinking', data: 'r' },
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } },
          { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
          { ...text('Seen.'), citations: [{ type: 'char_location', start_char_index: 0 }] },
          { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a' } },
        ],
      },
      { role: 'system', content: [text('Mid-conversation rule.')] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [text('ok'), { type: 'image', source: png }, { type: 'search_result', source: 's', title: 't', content: [text('r')] }],
          },
          { type: 'document', title: 'Doc', source: { type: 'text', media_type: 'text/plain', data: 'body' } },
          { type: 'document', source: { type: 'content', content: [text('c'), { type: 'image', source: png }] } },
          { type: 'search_result', source: 'https://x', title: 'X', content: [text('result')] },
          { type: 'container_upload', file_id: 'file_1' },
          { ...text('Go.'), cache_control: { type: 'ephemeral' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'compaction', content: 'Summary.' },
          { type: 'mcp_tool_use', id: 'm1', name: 'n', server_name: 's', input: {} },
        ],
      },
      { role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }, text('And this.')] },
    ],
  },
];

/** Members whose values are carried verbatim (schemas, tool inputs): what is inside them is the client's own data. */
const VERBATIM = new Set(['input_schema', 'input', 'schema']);
const KEYS = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/).map((s) => `x_${s}`),
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'metadata.*', '*', 'misplaced block', 'tool_choice.type', 'ünïcode', ''),
);

interface Insertion {
  node: number;
  key: string;
  value: unknown;
}

interface Added {
  /** As the decoder names it: the keys joined with dots. */
  path: string;
  keys: string[];
  value: unknown;
}

export function createMessagesUnknownMembersTarget(): FuzzTarget {
  return {
    name: 'anthropic messages: unknown members at every level',
    open: async () => ({
      arbitrary: fc.record({
        base: fc.nat({ max: BASES.length - 1 }),
        insertions: fc.array(fc.record({ node: fc.nat(), key: KEYS, value: fc.jsonValue({ maxDepth: 2 }) }), { minLength: 1, maxLength: 8 }),
      }),
      check: (input: unknown) => {
        const { base, insertions } = input as { base: number; insertions: Insertion[] };
        const body = structuredClone(BASES[base]) as JsonObject;
        const nodes = listJsonObjects(body, VERBATIM);
        const added: Added[] = [];
        for (const { node, key, value } of insertions) {
          const target = nodes[node % nodes.length] as JsonObjectNode;
          // A key the object already has would change a known member, not add an unknown one.
          if (Object.hasOwn(target.object, key)) continue;
          // defineProperty: a plain assignment to `__proto__` would set the prototype, not add a member as JSON.parse does.
          Object.defineProperty(target.object, key, { value, enumerable: true, writable: true, configurable: true });
          const keys = [...target.keys, key];
          added.push({ path: keys.join('.'), keys, value });
        }
        const request = decodeMessagesRequest(body);
        checkRecorded(request, added);
        checkPassedThrough(body, added);
        // The bridge refuses before converting; each conversion is still run, so a refused field cannot hide a crash in it.
        parseOrReject(() => bridgeUnmodeled({ request, upstreamModel: 'up' }, 'relay'), ['UNSUPPORTED']);
        parseOrReject(() => bridgeUnmodeled({ request, upstreamModel: 'up', strict: true }, 'relay'), ['UNSUPPORTED']);
        parseOrReject(() => convertOpenAIRequest(request, 'up', false), ['INVALID_ARG', 'UNSUPPORTED']);
        parseOrReject(() => convertGeminiRequest(request, 'gemini-2.5-flash'), ['INVALID_ARG', 'UNSUPPORTED']);
      },
      close: async () => {},
    }),
  };
}

/** Each added member (but JSON null, the same as absent) is recorded, itself or through a recorded ancestor. */
function checkRecorded(request: ChatRequest, added: Added[]): void {
  const params = (request.unmodeled ?? []).map((f) => f.param);
  for (const { path, value } of added) {
    if (value === null) continue;
    if (!params.some((p) => path === p || path.startsWith(`${p}.`))) throw new Error(`'${path}' was neither carried nor recorded; unmodeled: ${JSON.stringify(params)}`);
  }
}

/** The body an Anthropic upstream would read (through JSON, as on the wire) has each added member where it was added. */
function checkPassedThrough(body: JsonObject, added: Added[]): void {
  const sent = JSON.parse(JSON.stringify(convertPassThroughBody(body, 'upstream-model', false))) as unknown;
  for (const { path, keys, value } of added) {
    if (JSON.stringify(valueAt(sent, keys)) !== JSON.stringify(value)) throw new Error(`pass-through lost '${path}'`);
  }
}
