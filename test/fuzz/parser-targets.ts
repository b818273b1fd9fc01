// Fuzz targets for the in-process parsers of outside bytes: config.pbtxt and JSON model configs, the
// KServe infer request (JSON header + binary tensors, and the raw form), the lossless JSON reader,
// herd.yaml. Invariant: each returns, or throws a HerdError that maps to a 4xx; results stay bounded.
import fc from 'fast-check';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseInferRequestBody, type RawModelDescription } from '../../src/core/codecs/kserve-infer-request.ts';
import { parseLosslessJson } from '../../src/core/codecs/lossless-json.ts';
import { isBytesData, type TensorData } from '../../src/core/tensor.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { parseGenerateRequest, type GenerateInputSpec } from '../../src/core/codecs/kserve-generate.ts';
import { validateChatRequest } from '../../src/gateway/ingress/openai-chat/validate-chat-request.ts';
import { mapErrorToOpenAI } from '../../src/http/map-openai-error.ts';
import { parseJsonModelConfig, parsePbtxtModelConfig } from '../../src/serving/model-config/parse-model-config.ts';
import { mapErrorToKserve } from '../../src/http/map-kserve-error.ts';
import { TRITON_MODEL_REPOSITORY } from '../triton-testdata.ts';
import { checkRejection, type FuzzTarget } from './fuzz-target.ts';
import { fuzzBytes, fuzzText, mutatedJsonValue } from './mutate-bytes.ts';

/** Every config.pbtxt of Triton's example repository, ours and the test fixtures. */
export function readPbtxtSamples(): string[] {
  const roots = [TRITON_MODEL_REPOSITORY, resolve('examples/model_repository'), resolve('test/fixtures')];
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (!existsSync(dir) || depth > 3) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name), depth + 1);
      else if (entry.name === 'config.pbtxt') out.push(readFileSync(join(dir, entry.name), 'utf8'));
    }
  };
  for (const root of roots) walk(root, 0);
  return out;
}

const syncTarget = (name: string, arbitrary: fc.Arbitrary<unknown>, check: (input: never) => void): FuzzTarget => ({
  name,
  open: async () => ({ arbitrary, check: (input) => check(input as never), close: async () => undefined }),
});

/** A parser's rejection must be a client error in Triton's terms (400 family), never a 500. */
function checkKserveRejection(err: unknown): void {
  checkRejection(err, ['INVALID_ARG', 'NOT_FOUND', 'UNSUPPORTED', 'PAYLOAD_TOO_LARGE']);
  const { status } = mapErrorToKserve(err);
  if (status === 500) throw new Error(`rejection maps to ${status}`);
}

function tryParse(parse: () => unknown): unknown {
  try {
    return parse();
  } catch (err) {
    checkKserveRejection(err);
    return undefined;
  }
}

export function pbtxtTarget(): FuzzTarget {
  const samples = readPbtxtSamples();
  return syncTarget('config.pbtxt', fuzzText(samples), (text: string) => {
    tryParse(() => parsePbtxtModelConfig(text, 'config.pbtxt'));
  });
}

export function jsonModelConfigTarget(): FuzzTarget {
  // The JSON form of each sample (what GET /config answers and the load API's `config` takes).
  const samples = readPbtxtSamples().flatMap((text) => {
    try {
      return [JSON.stringify(parsePbtxtModelConfig(text, 'config.pbtxt'))];
    } catch {
      return [];
    }
  });
  const arbitrary = fc.oneof(fuzzText(samples), mutatedJsonValue(samples.map((t) => JSON.parse(t))));
  return syncTarget('config JSON (load API)', arbitrary, (input: unknown) => {
    tryParse(() => parseJsonModelConfig(input, 'config'));
  });
}

/** Valid infer request bodies: JSON only, JSON header + binary sections, BYTES, BOOL, INT64 beyond 2^53. */
export function inferRequestSamples(): { body: Buffer; headerLength: number | undefined }[] {
  const binary = (header: unknown, ...sections: Buffer[]) => {
    const json = Buffer.from(JSON.stringify(header));
    return { body: Buffer.concat([json, ...sections]), headerLength: json.length };
  };
  const int32 = Buffer.from(new Int32Array([1, 2, 3, 4]).buffer);
  const fp32 = Buffer.from(new Float32Array([0.5, -1, 3.25, 1e30]).buffer);
  const strings = Buffer.concat([Buffer.from([3, 0, 0, 0]), Buffer.from('abc'), Buffer.from([0, 0, 0, 0]), Buffer.from([2, 0, 0, 0]), Buffer.from('hé')]);
  return [
    { body: Buffer.from(JSON.stringify({ id: 'a', inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 4], data: [1, 2, 3, 4] }] })), headerLength: undefined },
    {
      body: Buffer.from(
        '{"inputs":[{"name":"X","datatype":"INT64","shape":[2],"data":[9007199254740993,-9223372036854775808]}],"outputs":[{"name":"Y","parameters":{"binary_data":true}}]}',
      ),
      headerLength: undefined,
    },
    { body: Buffer.from('{"inputs":[{"name":"F","datatype":"FP32","shape":[3],"data":[NaN,Infinity,-Infinity]}]}'), headerLength: undefined },
    {
      body: Buffer.from(
        JSON.stringify({ inputs: [{ name: 'S', datatype: 'BYTES', shape: [3], data: ['a', 'b', 'c'] }], parameters: { sequence_id: 7, sequence_start: true, priority: 1 } }),
      ),
      headerLength: undefined,
    },
    binary(
      {
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 4], parameters: { binary_data_size: 16 } },
          { name: 'INPUT1', datatype: 'FP32', shape: [4], parameters: { binary_data_size: 16 } },
        ],
        parameters: { binary_data_output: true },
      },
      int32,
      fp32,
    ),
    binary({ inputs: [{ name: 'S', datatype: 'BYTES', shape: [3], parameters: { binary_data_size: strings.length } }] }, strings),
    binary(
      {
        inputs: [
          { name: 'B', datatype: 'BOOL', shape: [4], parameters: { binary_data_size: 4 } },
          { name: 'H', datatype: 'FP16', shape: [2], parameters: { binary_data_size: 4 } },
        ],
      },
      Buffer.from([0, 1, 2, 255]),
      Buffer.from([0, 60, 0, 188]),
    ),
    { body: int32, headerLength: 0 },
  ];
}

/** Where the JSON header of `body` ends, as a client sending binary sections after it would count. */
function jsonPrefixLength(body: Buffer): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) return i + 1;
  }
  return body.length;
}

/** The one-input model the raw form (Inference-Header-Content-Length: 0) is read against. */
const RAW_MODEL: RawModelDescription = { name: 'raw', max_batch_size: 8, input: [{ name: 'INPUT0', data_type: 'TYPE_INT32', dims: [-1] }] };

/** Bytes a decoded request may hold beyond its body: headers of typed arrays, at most a copy of the body. */
function checkBounded(inputs: readonly { data: TensorData }[], bodyLength: number): void {
  let bytes = 0;
  for (const { data } of inputs) {
    if (isBytesData(data)) bytes += data.length * 16;
    else if (ArrayBuffer.isView(data)) bytes += data.byteLength;
    else bytes += (data as unknown[]).length * 8;
  }
  // JSON numbers become at most 8 bytes each from at least 2 bytes of text ("1,"), so 4x the body bounds it.
  if (bytes > 4 * bodyLength + 1024) throw new Error(`decoded request holds ~${bytes} bytes for a ${bodyLength}-byte body`);
}

const DATATYPES = ['BOOL', 'UINT8', 'INT8', 'UINT16', 'INT16', 'UINT32', 'INT32', 'UINT64', 'INT64', 'FP16', 'BF16', 'FP32', 'FP64', 'BYTES', 'FP8', ''];
const dim = fc.oneof(fc.integer({ min: 0, max: 8 }), fc.constantFrom(-1, 2 ** 31, 2 ** 32, 2 ** 33, 2 ** 53, 2 ** 53 + 2, 1e300, 0.5), fc.nat());
const jsonScalar = fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.string({ maxLength: 8 }), fc.constant(null), fc.bigInt().map(String));

/** Headers built field by field (datatype, shape, sizes), so huge shapes and lying sizes are common, not rare. */
const structuredInferRequest: fc.Arbitrary<Buffer> = fc
  .tuple(
    fc.array(
      fc
        .tuple(
          fc.record({
            name: fc.oneof(fc.constantFrom('INPUT0', 'INPUT1', ''), fc.string({ maxLength: 4 })),
            datatype: fc.constantFrom(...DATATYPES),
            shape: fc.array(dim, { minLength: 1, maxLength: 4 }),
          }),
          // Mostly exactly one content field, as a real client sends; sometimes none or both.
          fc.oneof(
            { weight: 4, arbitrary: fc.record({ parameters: fc.record({ binary_data_size: fc.oneof(fc.nat({ max: 64 }), dim) }) }) },
            {
              weight: 4,
              arbitrary: fc.record({ data: fc.oneof(fc.array(jsonScalar, { maxLength: 8 }), fc.array(fc.array(jsonScalar, { maxLength: 3 }), { maxLength: 3 }), jsonScalar) }),
            },
            { weight: 1, arbitrary: fc.record({ data: jsonScalar, parameters: fc.record({ binary_data_size: dim }) }, { requiredKeys: [] }) },
          ),
        )
        .map(([head, content]) => ({ ...head, ...content })),
      { minLength: 1, maxLength: 3 },
    ),
    fc.uint8Array({ maxLength: 96 }),
  )
  .map(([inputs, tail]) => Buffer.concat([Buffer.from(JSON.stringify({ inputs })), tail]));

export function inferRequestTarget(): FuzzTarget {
  const samples = inferRequestSamples();
  const arbitrary = fc.tuple(
    fc.oneof({ weight: 3, arbitrary: fuzzBytes(samples.map((s) => s.body)) }, { weight: 2, arbitrary: structuredInferRequest }),
    fc.oneof(fc.constant<'sample'>('sample'), fc.constant<'json'>('json'), fc.constant(undefined), fc.integer({ min: -2, max: 600 }), fc.string({ maxLength: 12 })),
    fc.nat({ max: samples.length - 1 }),
  );
  return syncTarget('KServe infer request (JSON + binary)', arbitrary, ([body, header, index]: [Buffer, 'sample' | 'json' | number | string | undefined, number]) => {
    const headerLength = header === 'sample' ? samples[index]?.headerLength : header === 'json' ? jsonPrefixLength(body) : header;
    const decoded = tryParse(() => parseInferRequestBody(body, headerLength, { modelName: 'fuzz', rawInput: RAW_MODEL })) as { inputs: { data: TensorData }[] } | undefined;
    if (decoded) checkBounded(decoded.inputs, body.length);
  });
}

const jsonSamples = [
  '{"a":[1,2.5,-3e10,true,false,null],"b":{"c":"d\\u00e9\\n"},"e":18446744073709551615}',
  '[{"inputs":[{"name":"x","shape":[1],"data":[NaN,Infinity,-Infinity]}]}]',
  '"just a string with \\"escapes\\" and \\ud83d\\ude00"',
  '-0.0e-0',
  '[[[[[]]]],{},{"":""}]',
];

/** Where JSON.parse accepts the text, the lossless reader must agree (bigints aside); elsewhere it rejects with INVALID_ARG. */
export function losslessJsonTarget(): FuzzTarget {
  return syncTarget('lossless JSON', fc.oneof(fuzzText(jsonSamples), fc.json({ maxDepth: 6 })), (text: string) => {
    let expected: unknown;
    let standard = true;
    try {
      expected = JSON.parse(text);
    } catch {
      standard = false;
    }
    let actual: unknown;
    try {
      actual = parseLosslessJson(text);
    } catch (err) {
      checkKserveRejection(err);
      // Deeper than the reader's limit is a refusal JSON.parse would not make; anything else it accepts must parse.
      if (standard && !(err as Error).message.includes('nest'))
        throw new Error(`JSON.parse accepts ${JSON.stringify(text.slice(0, 200))} but the lossless reader refused: ${(err as Error).message}`);
      return;
    }
    if (standard && !sameJson(expected, actual)) throw new Error(`lossless reader disagrees with JSON.parse on ${JSON.stringify(text.slice(0, 200))}`);
  });
}

function sameJson(a: unknown, b: unknown): boolean {
  if (typeof b === 'bigint') return typeof a === 'number' && Number(b) === a;
  if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b) || a === b;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (a !== null && typeof a === 'object') {
    if (b === null || typeof b !== 'object' || Array.isArray(b)) return false;
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

export function readHerdYamlSamples(): string[] {
  const files = ['examples/herd.yaml', 'examples/herd-local-upstream.yaml', 'examples/cost-profile.yaml'].filter((f) => existsSync(f));
  return [
    ...files.map((f) => readFileSync(f, 'utf8')),
    'server: { http_port: 0, grpc_port: 0 }\nproviders:\n  a: &p { type: openai, base_url: "http://127.0.0.1:1/v1", api_key_env: K }\n  b: *p\nmodels:\n  m: { price: { input: 1, output: 2 }, deployments: [{ provider: a }] }\n',
  ];
}

export function herdYamlTarget(): FuzzTarget {
  const env = { HOME: '/home/fuzz', K: 'value' };
  return syncTarget('herd.yaml', fuzzText(readHerdYamlSamples()), (text: string) => {
    try {
      parseHerdConfig(text, 'herd.yaml', env);
    } catch (err) {
      checkRejection(err, ['INVALID_ARG']);
    }
  });
}

/** JSON text as the HTTP layer parses it before the decoder sees it; undefined when it is not JSON. */
function parseJsonText(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

const GENERATE_INPUTS: GenerateInputSpec[] = [
  { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
  { name: 'TEXT', datatype: 'BYTES', shape: [-1] },
  { name: 'FLAG', datatype: 'BOOL', shape: [1] },
];

export function generateRequestTarget(): FuzzTarget {
  const samples = [
    JSON.stringify({ id: 'g', INPUT0: Array(16).fill(3), TEXT: 'hello', FLAG: true, parameters: { max_tokens: 5, stream: false } }),
    JSON.stringify({ parameters: { INPUT0: [Array(16).fill(1)], TEXT: ['a', 'b'] }, temperature: 0.5 }),
  ];
  const arbitrary = fc.oneof(
    fuzzText(samples).map(parseJsonText),
    mutatedJsonValue(samples.map((t) => JSON.parse(t))).map((value) => ({ value })),
  );
  return syncTarget('KServe generate request', arbitrary, (parsed: { value: unknown } | undefined) => {
    if (parsed === undefined) return;
    tryParse(() => parseGenerateRequest(parsed.value, GENERATE_INPUTS, 64 * 1024));
  });
}

/** The gateway's request validator: a rejection is a HerdError OpenAI's mapping answers with a 4xx. */
export function chatRequestTarget(): FuzzTarget {
  const samples = [
    JSON.stringify({
      model: 'gpt-4.1',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 10,
      temperature: 0.2,
    }),
    JSON.stringify({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '42' },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'number' } } } } }],
      tool_choice: 'auto',
      response_format: { type: 'json_object' },
      stop: ['\n'],
      n: 1,
    }),
  ];
  const arbitrary = fc.oneof(
    fuzzText(samples).map(parseJsonText),
    mutatedJsonValue(samples.map((t) => JSON.parse(t))).map((value) => ({ value })),
  );
  return syncTarget('chat completion request', arbitrary, (parsed: { value: unknown } | undefined) => {
    if (parsed === undefined) return;
    try {
      validateChatRequest(parsed.value);
    } catch (err) {
      checkRejection(err, ['INVALID_ARG', 'UNSUPPORTED', 'NOT_FOUND']);
      const { status } = mapErrorToOpenAI(err as never);
      if (status >= 500) throw new Error(`rejection maps to ${status}`);
    }
  });
}

export const PARSER_TARGETS: (() => FuzzTarget)[] = [
  pbtxtTarget,
  jsonModelConfigTarget,
  inferRequestTarget,
  losslessJsonTarget,
  generateRequestTarget,
  chatRequestTarget,
  herdYamlTarget,
];
