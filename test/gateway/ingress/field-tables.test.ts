// The field tables of the OpenAI dialects walked: a request carrying each listed field is decoded, and the field
// comes out as the table says (mapped: not recorded; dropped or refused: recorded with that fate and reason). Every
// entry needs a sample here and every sample an entry, and docs/fields/*.md list exactly the code's entries.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { describeFate, FATE_WORDS, type FieldTable } from '../../../src/gateway/protocol/dialect-field-table.ts';
import { CHAT_FIELDS } from '../../../src/gateway/ingress/openai-chat/chat-field-table.ts';
import { decodeCompletionsRequest } from '../../../src/gateway/ingress/openai-completions/completions-codec.ts';
import { COMPLETIONS_FIELDS } from '../../../src/gateway/ingress/openai-completions/completions-field-table.ts';
import { decodeResponsesRequest } from '../../../src/gateway/ingress/openai-responses/decode-responses-request.ts';
import { HOSTED_TOOL_TYPES, RESPONSES_FIELDS } from '../../../src/gateway/ingress/openai-responses/responses-field-table.ts';
import { validateChatRequest } from '../../../src/gateway/ingress/openai-chat/validate-chat-request.ts';

type Json = Record<string, unknown>;
/** The body's members over a minimal valid request, and the param the field is recorded under when not mapped. */
interface Sample {
  body: Json;
  param: string;
}

const fn = { type: 'function', function: { name: 'f' } };
const user = { role: 'user', content: 'hi' };
const withAssistant = (assistant: Json) => ({ messages: [user, { role: 'assistant', ...assistant }] });
const userParts = (...content: Json[]) => ({ messages: [{ role: 'user', content }] });

const CHAT_SAMPLES: Record<string, Sample> = {
  model: { body: {}, param: 'model' },
  messages: { body: {}, param: 'messages' },
  temperature: { body: { temperature: 0.5 }, param: 'temperature' },
  top_p: { body: { top_p: 0.5 }, param: 'top_p' },
  max_tokens: { body: { max_tokens: 5 }, param: 'max_tokens' },
  max_completion_tokens: { body: { max_completion_tokens: 5 }, param: 'max_completion_tokens' },
  stop: { body: { stop: 'x' }, param: 'stop' },
  n: { body: { n: 1 }, param: 'n' },
  tools: { body: { tools: [fn] }, param: 'tools' },
  tool_choice: { body: { tools: [fn], tool_choice: 'auto' }, param: 'tool_choice' },
  parallel_tool_calls: { body: { parallel_tool_calls: false }, param: 'parallel_tool_calls' },
  response_format: { body: { response_format: { type: 'json_object' } }, param: 'response_format' },
  user: { body: { user: 'u' }, param: 'user' },
  stream: { body: { stream: true }, param: 'stream' },
  'stream_options.include_usage': { body: { stream: true, stream_options: { include_usage: true } }, param: 'stream_options' },
  'stream_options.include_obfuscation': { body: { stream: true, stream_options: { include_obfuscation: false } }, param: 'stream_options' },
  seed: { body: { seed: 1 }, param: 'seed' },
  presence_penalty: { body: { presence_penalty: 0 }, param: 'presence_penalty' },
  frequency_penalty: { body: { frequency_penalty: 0 }, param: 'frequency_penalty' },
  logprobs: { body: { logprobs: true }, param: 'logprobs' },
  top_logprobs: { body: { logprobs: true, top_logprobs: 2 }, param: 'top_logprobs' },
  logit_bias: { body: { logit_bias: { '1': 1 } }, param: 'logit_bias' },
  reasoning_effort: { body: { reasoning_effort: 'low' }, param: 'reasoning_effort' },
  metadata: { body: { metadata: { a: 'b' } }, param: 'metadata' },
  store: { body: { store: true }, param: 'store' },
  service_tier: { body: { service_tier: 'auto' }, param: 'service_tier' },
  prompt_cache_key: { body: { prompt_cache_key: 'k' }, param: 'prompt_cache_key' },
  safety_identifier: { body: { safety_identifier: 's' }, param: 'safety_identifier' },
  verbosity: { body: { verbosity: 'low' }, param: 'verbosity' },
  audio: { body: { audio: { voice: 'alloy', format: 'wav' } }, param: 'audio' },
  modalities: { body: { modalities: ['text', 'audio'] }, param: 'modalities' },
  prediction: { body: { prediction: { type: 'content', content: 'x' } }, param: 'prediction' },
  web_search_options: { body: { web_search_options: {} }, param: 'web_search_options' },
  prompt_cache_retention: { body: { prompt_cache_retention: '24h' }, param: 'prompt_cache_retention' },
  functions: { body: { functions: [{ name: 'f' }] }, param: 'functions' },
  function_call: { body: { function_call: 'auto' }, param: 'function_call' },
  'messages[].name': { body: { messages: [{ ...user, name: 'n' }] }, param: 'messages.0.name' },
  'messages[].tool_calls': {
    body: withAssistant({ content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }),
    param: 'messages.1.tool_calls',
  },
  'messages[].refusal': { body: withAssistant({ content: 'x', refusal: 'no' }), param: 'messages.1.refusal' },
  'messages[].reasoning_content': { body: withAssistant({ content: 'x', reasoning_content: 'r' }), param: 'messages.1.reasoning_content' },
  'messages[].annotations': { body: withAssistant({ content: 'x', annotations: [] }), param: 'messages.1.annotations' },
  'messages[].audio': { body: withAssistant({ content: null, audio: { id: 'audio_1' } }), param: 'messages.1.audio' },
  'messages[].function_call': { body: withAssistant({ content: null, function_call: { name: 'f', arguments: '{}' } }), param: 'messages.1.function_call' },
  'messages[].content[type=text]': { body: userParts({ type: 'text', text: 'x' }), param: 'messages.0.content.0' },
  'messages[].content[type=image_url]': { body: userParts({ type: 'image_url', image_url: { url: 'https://x/y.png' } }), param: 'messages.0.content.0' },
  'messages[].content[type=refusal]': { body: withAssistant({ content: [{ type: 'refusal', refusal: 'no' }] }), param: 'messages.1.content.0' },
  'messages[].content[type=input_audio]': { body: userParts({ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }), param: 'messages.0.content.0' },
  'messages[].content[type=file]': { body: userParts({ type: 'file', file: { file_id: 'file_1' } }), param: 'messages.0.content.0' },
  'messages[].content[type=(other)]': { body: userParts({ type: 'video_url', video_url: { url: 'https://x/y.mp4' } }), param: 'messages.0.content.0' },
  'tools[type=function]': { body: { tools: [fn] }, param: 'tools.0' },
  'tools[type=custom]': { body: { tools: [{ type: 'custom', custom: { name: 'c' } }] }, param: 'tools.0' },
  'tools[type=(other)]': { body: { tools: [{ type: 'builtin_function', function: { name: '$web_search' } }] }, param: 'tools.0' },
  'tool_choice[type=(other)]': { body: { tools: [fn], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [fn] } } }, param: 'tool_choice' },
  '(unknown member)': { body: { x_new_parameter: { a: 1 } }, param: 'x_new_parameter' },
};

const item = (type: string, rest: Json = {}) => ({ type, ...rest });
const rParts = (...content: Json[]) => ({ input: [{ role: 'user', content }] });
const call = item('function_call', { call_id: 'c1', name: 'f', arguments: '{}' });
const rfn = { type: 'function', name: 'f' };

const RESPONSES_SAMPLES: Record<string, Sample> = {
  model: { body: {}, param: 'model' },
  input: { body: {}, param: 'input' },
  instructions: { body: { instructions: 'be brief' }, param: 'instructions' },
  tools: { body: { tools: [rfn] }, param: 'tools' },
  tool_choice: { body: { tools: [rfn], tool_choice: 'required' }, param: 'tool_choice' },
  parallel_tool_calls: { body: { parallel_tool_calls: false }, param: 'parallel_tool_calls' },
  max_output_tokens: { body: { max_output_tokens: 5 }, param: 'max_output_tokens' },
  temperature: { body: { temperature: 0.5 }, param: 'temperature' },
  top_p: { body: { top_p: 0.5 }, param: 'top_p' },
  stream: { body: { stream: true }, param: 'stream' },
  'stream_options.include_obfuscation': { body: { stream: true, stream_options: { include_obfuscation: false } }, param: 'stream_options' },
  metadata: { body: { metadata: { a: 'b' } }, param: 'metadata' },
  user: { body: { user: 'u' }, param: 'user' },
  safety_identifier: { body: { safety_identifier: 's' }, param: 'safety_identifier' },
  prompt_cache_key: { body: { prompt_cache_key: 'k' }, param: 'prompt_cache_key' },
  service_tier: { body: { service_tier: 'priority' }, param: 'service_tier' },
  'reasoning.effort': { body: { reasoning: { effort: 'low' } }, param: 'reasoning' },
  'reasoning.summary': { body: { reasoning: { summary: 'auto' } }, param: 'reasoning.summary' },
  'reasoning.generate_summary': { body: { reasoning: { generate_summary: 'concise' } }, param: 'reasoning.generate_summary' },
  'reasoning.context': { body: { reasoning: { context: 'all' } }, param: 'reasoning.context' },
  'text.format': { body: { text: { format: { type: 'json_object' } } }, param: 'text' },
  'text.verbosity': { body: { text: { verbosity: 'low' } }, param: 'text' },
  store: { body: { store: false }, param: 'store' },
  'store: true': { body: { store: true }, param: 'store' },
  truncation: { body: { truncation: 'disabled' }, param: 'truncation' },
  'truncation: auto': { body: { truncation: 'auto' }, param: 'truncation' },
  background: { body: { background: false }, param: 'background' },
  'background: true': { body: { background: true }, param: 'background' },
  include: { body: { include: ['reasoning.encrypted_content'] }, param: 'include' },
  top_logprobs: { body: { top_logprobs: 2 }, param: 'top_logprobs' },
  max_tool_calls: { body: { max_tool_calls: 3 }, param: 'max_tool_calls' },
  client_metadata: { body: { client_metadata: { 'x-codex-turn': '1' } }, param: 'client_metadata' },
  prompt_cache_retention: { body: { prompt_cache_retention: '24h' }, param: 'prompt_cache_retention' },
  context_management: { body: { context_management: [{ type: 'compaction', compact_threshold: 1000 }] }, param: 'context_management' },
  previous_response_id: { body: { previous_response_id: 'resp_1' }, param: 'previous_response_id' },
  conversation: { body: { conversation: 'conv_1' }, param: 'conversation' },
  prompt: { body: { prompt: { id: 'pmpt_1' } }, param: 'prompt' },
  'tools[type=function]': { body: { tools: [rfn] }, param: 'tools.0' },
  'tools[type=custom]': { body: { tools: [{ type: 'custom', name: 'c' }] }, param: 'tools.0' },
  'tools[type=namespace]': { body: { tools: [{ type: 'namespace', name: 'ns', description: 'd', tools: [rfn] }] }, param: 'tools.0' },
  'tools[type=(other)]': { body: { tools: [{ type: 'a_future_tool' }] }, param: 'tools.0' },
  ...Object.fromEntries(
    HOSTED_TOOL_TYPES.flatMap((type) => [
      [`tools[type=${type}]`, { body: { tools: [{ type }] }, param: 'tools.0' }],
      [`tool_choice[type=${type}]`, { body: { tools: [{ type }], tool_choice: { type } }, param: 'tool_choice' }],
    ]),
  ),
  'tool_choice[type=allowed_tools]': { body: { tools: [rfn], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [rfn] } }, param: 'tool_choice' },
  'tool_choice[type=(other)]': { body: { tools: [rfn], tool_choice: { type: 'a_future_choice' } }, param: 'tool_choice' },
  'input[type=message]': { body: { input: [item('message', user)] }, param: 'input.0' },
  'input[type=function_call]': { body: { input: [user, call] }, param: 'input.1' },
  'input[type=function_call_output]': { body: { input: [user, call, item('function_call_output', { call_id: 'c1', output: 'ok' })] }, param: 'input.2' },
  'input[type=custom_tool_call]': { body: { input: [user, item('custom_tool_call', { call_id: 'c2', name: 'c', input: 'x' })] }, param: 'input.1' },
  'input[type=custom_tool_call_output]': {
    body: { input: [user, item('custom_tool_call', { call_id: 'c2', name: 'c', input: 'x' }), item('custom_tool_call_output', { call_id: 'c2', output: 'ok' })] },
    param: 'input.2',
  },
  'input[type=reasoning]': { body: { input: [user, item('reasoning', { summary: [{ type: 'summary_text', text: 'r' }] })] }, param: 'input.1' },
  'input[type=reasoning].encrypted_content': { body: { input: [user, item('reasoning', { summary: [], encrypted_content: 'gAAAA' })] }, param: 'input.1.encrypted_content' },
  'input[type=item_reference]': { body: { input: [user, item('item_reference', { id: 'msg_1' })] }, param: 'input.1' },
  'input[type=(other)]': { body: { input: [user, item('additional_tools', { tools: [rfn] })] }, param: 'input.1' },
  'input[].content[type=input_text]': { body: rParts({ type: 'input_text', text: 'x' }), param: 'input.0.content.0' },
  'input[].content[type=input_image]': { body: rParts({ type: 'input_image', image_url: 'https://x/y.png', detail: 'original' }), param: 'input.0.content.0' },
  'input[].content[type=input_image].file_id': { body: rParts({ type: 'input_image', file_id: 'file_1' }), param: 'input.0.content.0.file_id' },
  'input[].content[type=output_text]': {
    body: { input: [user, { role: 'assistant', content: [{ type: 'output_text', text: 'x', annotations: [] }] }] },
    param: 'input.1.content.0',
  },
  'input[].content[type=refusal]': { body: { input: [user, { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }] }, param: 'input.1.content.0' },
  'input[].content[type=input_file]': { body: rParts({ type: 'input_file', file_id: 'file_1' }), param: 'input.0.content.0' },
  'input[].content[type=input_audio]': { body: rParts({ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }), param: 'input.0.content.0' },
  'input[].content[type=(other)]': { body: rParts({ type: 'input_video', video_url: 'https://x/y.mp4' }), param: 'input.0.content.0' },
  'input[].output[type=(other)]': {
    body: { input: [user, call, item('function_call_output', { call_id: 'c1', output: [{ type: 'input_image', image_url: 'https://x/y.png' }] })] },
    param: 'input.2.output.0',
  },
  '(unknown member)': { body: { x_new_parameter: true }, param: 'x_new_parameter' },
};

const COMPLETIONS_SAMPLES: Record<string, Sample> = {
  model: { body: {}, param: 'model' },
  prompt: { body: { prompt: ['one'] }, param: 'prompt' },
  'prompt: several or token ids': { body: { prompt: [1, 2, 3] }, param: 'prompt' },
  max_tokens: { body: { max_tokens: 5 }, param: 'max_tokens' },
  temperature: { body: { temperature: 0.5 }, param: 'temperature' },
  top_p: { body: { top_p: 0.5 }, param: 'top_p' },
  n: { body: { n: 2 }, param: 'n' },
  stream: { body: { stream: true }, param: 'stream' },
  'stream_options.include_usage': { body: { stream: true, stream_options: { include_usage: true } }, param: 'stream_options' },
  stop: { body: { stop: ['\n'] }, param: 'stop' },
  presence_penalty: { body: { presence_penalty: 1 }, param: 'presence_penalty' },
  frequency_penalty: { body: { frequency_penalty: 1 }, param: 'frequency_penalty' },
  logit_bias: { body: { logit_bias: { '50256': -100 } }, param: 'logit_bias' },
  seed: { body: { seed: 7 }, param: 'seed' },
  user: { body: { user: 'u' }, param: 'user' },
  echo: { body: { echo: false }, param: 'echo' },
  'echo: true': { body: { echo: true }, param: 'echo' },
  best_of: { body: { best_of: 1 }, param: 'best_of' },
  'best_of > 1': { body: { best_of: 3 }, param: 'best_of' },
  suffix: { body: { suffix: '\n}' }, param: 'suffix' },
  logprobs: { body: { logprobs: 2 }, param: 'logprobs' },
  '(unknown member)': { body: { messages: [user] }, param: 'messages' },
};

const DIALECTS: Array<{ name: string; doc: string; table: FieldTable; samples: Record<string, Sample>; base: Json; decode: (body: Json) => ChatRequest }> = [
  { name: 'openai-chat', doc: 'docs/fields/openai-chat.md', table: CHAT_FIELDS, samples: CHAT_SAMPLES, base: { model: 'm', messages: [user] }, decode: validateChatRequest },
  {
    name: 'openai-responses',
    doc: 'docs/fields/openai-responses.md',
    table: RESPONSES_FIELDS,
    samples: RESPONSES_SAMPLES,
    base: { model: 'm', input: 'hi' },
    decode: (body) => decodeResponsesRequest(body).request,
  },
  {
    name: 'openai-completions',
    doc: 'docs/fields/openai-completions.md',
    table: COMPLETIONS_FIELDS,
    samples: COMPLETIONS_SAMPLES,
    base: { model: 'm', prompt: 'hi' },
    decode: (body) => decodeCompletionsRequest(body).request,
  },
];

for (const { name, doc, table, samples, base, decode } of DIALECTS) {
  describe(`${name} field table`, () => {
    it('has a sample for every entry, and an entry for every sample', () => {
      assert.deepEqual(Object.keys(samples).sort(), Object.keys(table).sort());
    });

    for (const [key, fate] of Object.entries(table)) {
      it(`${key}: ${fate.bridged}`, () => {
        const sample = samples[key];
        assert.ok(sample, `no sample for ${key}`);
        const request = decode({ ...base, ...sample.body });
        const recorded = request.unmodeled?.filter((f) => f.param === sample.param || f.param.startsWith(`${sample.param}.`)) ?? [];
        if (fate.bridged === 'mapped') {
          assert.deepEqual(recorded, [], `${key} is mapped, yet recorded`);
        } else {
          assert.deepEqual(
            recorded.map((f) => [f.param, f.bridged, f.reason]),
            [[sample.param, fate.bridged, fate.reason]],
          );
        }
      });
    }

    it(`${doc} lists exactly the code's entries, with their fates and reasons`, () => {
      const rows = readFileSync(doc, 'utf8')
        .split('\n')
        .map((line) => /^\| `([^`]+)` \| (mapped|dropped|refused) \| (.*) \|$/.exec(line))
        .filter((m) => m !== null)
        .map((m) => [m[1], m[2], m[3]]);
      const expected = Object.entries(table).map(([k, f]) => [k, FATE_WORDS[f.bridged], describeFate(f)]);
      assert.deepEqual(rows, expected);
    });
  });
}
