// The protobuf text-format reader: every syntax form config.pbtxt files use, and errors that point
// at the exact line:column with the field path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import type { MessageValue } from '../../../src/serving/model-config/message-schema.ts';
import { ModelConfigSchema } from '../../../src/serving/model-config/model-config-schema.ts';
import { parseTextFormat } from '../../../src/serving/model-config/pbtxt-parser.ts';

const FILE = 'models/foo/config.pbtxt';
const parse = (text: string): MessageValue => parseTextFormat(text, ModelConfigSchema, FILE).message;

function parseError(text: string): HerdError {
  try {
    parse(text);
  } catch (err) {
    assert.ok(err instanceof HerdError, `expected a HerdError, got ${String(err)}`);
    assert.equal(err.code, 'INVALID_ARG');
    return err;
  }
  return assert.fail('expected the text to be rejected');
}

describe('pbtxt parser: syntax', () => {
  it('reads nested messages with {} or <>, with or without a colon', () => {
    const m = parse('version_policy: { latest < num_versions: 2 > }\ninput { name: "a" reshape: < shape: [1] > }');
    assert.deepEqual(m.version_policy, { latest: { num_versions: 2 } });
    assert.deepEqual(m.input, [{ name: 'a', reshape: { shape: [1] } }]);
  });

  it('reads repeated fields as repeated entries, [lists], or both, including lists of messages', () => {
    const m = parse(`
      input [ { name: "a" dims: 1 dims: 2 }, { name: "b" dims: [3, 4] dims: 5 } ]
      input: [{ name: "c" dims: [] }]
      output { name: "x" }
      output { name: "y" }`);
    assert.deepEqual(m.input, [
      { name: 'a', dims: [1, 2] },
      { name: 'b', dims: [3, 4, 5] },
      { name: 'c', dims: [] },
    ]);
    assert.deepEqual(
      (m.output as MessageValue[]).map((o) => o.name),
      ['x', 'y'],
    );
  });

  it('reads enums by name and by number', () => {
    const m = parse('input [{ data_type: TYPE_FP32 format: 2 }]');
    assert.deepEqual(m.input, [{ data_type: 'TYPE_FP32', format: 'FORMAT_NCHW' }]);
  });

  it('reads strings in either quote with C escapes, UTF-8 and adjacent-literal concatenation', () => {
    const m = parse(String.raw`name: "a\n\t\\\"\'b" 'c"d' "\x41\101\u00e9" '\xc3\xa9' "日本"`);
    assert.equal(m.name, 'a\n\t\\"\'bc"dAAéé日本');
    assert.equal(parse(String.raw`name: "\ud83d\ude00 \U0001F600 \a\b\f\v\r\?"`).name, '😀 😀 \x07\b\f\v\r?');
  });

  it('reads integers: negative, hex and octal; 64-bit ones as numbers', () => {
    const m = parse('max_batch_size: 0x10 input [{ dims: [-1, 017, 9007199254740991] }]');
    assert.equal(m.max_batch_size, 16);
    assert.deepEqual((m.input as MessageValue[])[0].dims, [-1, 15, 9007199254740991]);
  });

  it('reads floats in every protobuf spelling, and float fields as float32 the way protobuf prints them', () => {
    const m = parse(`sequence_batching { control_input [{ control [{ fp32_false_true: [1.5, -2, .5, 1e-3, 3f, 2.5F, -inf, nan, Infinity, 0x10, 0.1, 0.123456789] }] }] }`);
    const values = (((m.sequence_batching as MessageValue).control_input as MessageValue[])[0].control as MessageValue[])[0].fp32_false_true as number[];
    assert.deepEqual(values.slice(0, 7), [1.5, -2, 0.5, 0.001, 3, 2.5, -Infinity]);
    assert.ok(Number.isNaN(values[7]));
    assert.deepEqual(values.slice(8), [Infinity, 16, 0.1, 0.123456791]);
  });

  it('reads bools as true/True/t/1 and false/False/f/0', () => {
    const m = parse('input [{ optional: true }, { optional: True }, { optional: t }, { optional: 1 }, { optional: false }, { optional: False }, { optional: f }, { optional: 0 }]');
    assert.deepEqual(
      (m.input as MessageValue[]).map((i) => i.optional),
      [true, true, true, true, false, false, false, false],
    );
  });

  it('skips # comments and takes , and ; as optional separators', () => {
    const m = parse('# header\nname: "m"; # trailing\nmax_batch_size: 4,\ninput { name: "a", dims: [1]; }');
    assert.equal(m.name, 'm');
    assert.equal(m.max_batch_size, 4);
    assert.deepEqual(m.input, [{ name: 'a', dims: [1] }]);
  });

  it('reads map fields as repeated key/value entries or as a list; the last duplicate key wins', () => {
    const m = parse(`
      parameters { key: "a" value { string_value: "1" } }
      parameters: < key: 'b', value: < string_value: "2" > >
      parameters [ { key: "c" value: { string_value: "3" } }, { key: "a" value { string_value: "4" } } ]
      parameters { key: "empty" }
      metric_tags [ { key: "k" value: "v" } ]
      dynamic_batching { priority_queue_policy { key: 2 value { timeout_action: DELAY } } }`);
    assert.deepEqual(m.parameters, { a: { string_value: '4' }, b: { string_value: '2' }, c: { string_value: '3' }, empty: {} });
    assert.deepEqual(m.metric_tags, { k: 'v' });
    assert.deepEqual((m.dynamic_batching as MessageValue).priority_queue_policy, { 2: { timeout_action: 'DELAY' } });
  });

  it('records where each field and element was written', () => {
    const { locations } = parseTextFormat('name: "m"\ninput [\n  { name: "a" dims: [ 4, 8 ] }\n]\nparameters { key: "k" value { string_value: "v" } }', ModelConfigSchema, FILE);
    assert.deepEqual(locations.get('name'), { line: 1, column: 1 });
    assert.deepEqual(locations.get('input[0]'), { line: 3, column: 3 });
    assert.deepEqual(locations.get('input[0].dims'), { line: 3, column: 15 });
    assert.deepEqual(locations.get('input[0].dims[1]'), { line: 3, column: 26 });
    assert.deepEqual(locations.get('parameters["k"]'), { line: 5, column: 12 });
  });
});

describe('pbtxt parser: errors name file:line:column and the field path', () => {
  const cases: [string, string, string][] = [
    [
      'unknown nested field',
      'name: "foo"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 8\ninput [\n  {\n    name: "x"\n    dimz: [ 16 ]\n  }\n]',
      "models/foo/config.pbtxt:7:5: unknown field 'dimz' in ModelInput (input[0])",
    ],
    ['unknown top-level field', 'name: "m"\n  max_batchsize: 4', "models/foo/config.pbtxt:2:3: unknown field 'max_batchsize' in ModelConfig"],
    ['string for an integer', 'max_batch_size: "8"', `models/foo/config.pbtxt:1:17: expected an integer for int32 field 'max_batch_size', got string "8" (max_batch_size)`],
    ['float for an integer', 'input [{ dims: [1, 2.5] }]', "models/foo/config.pbtxt:1:20: expected an integer for int64 field 'dims', got number 2.5 (input[0].dims[1])"],
    ['identifier for a string', 'name: foo', "models/foo/config.pbtxt:1:7: expected a quoted string for field 'name', got 'foo' (name)"],
    [
      'bad enum name lists the valid ones',
      'input [{\n  data_type: TYPE_FLOAT\n}]',
      "models/foo/config.pbtxt:2:14: invalid value 'TYPE_FLOAT' for DataType field 'data_type'; valid values: TYPE_INVALID, TYPE_BOOL, TYPE_UINT8, TYPE_UINT16, TYPE_UINT32, TYPE_UINT64, TYPE_INT8, TYPE_INT16, TYPE_INT32, TYPE_INT64, TYPE_FP16, TYPE_FP32, TYPE_FP64, TYPE_STRING, TYPE_BF16 (input[0].data_type)",
    ],
    [
      'bad enum number',
      'instance_group [{ kind: 7 }]',
      "models/foo/config.pbtxt:1:25: invalid number 7 for ModelInstanceGroup.Kind field 'kind'; valid values: KIND_AUTO, KIND_GPU, KIND_CPU, KIND_MODEL (instance_group[0].kind)",
    ],
    ['bad bool', 'input [{ optional: yes }]', "models/foo/config.pbtxt:1:20: expected true or false for bool field 'optional', got 'yes' (input[0].optional)"],
    [
      'unterminated string (at its opening quote)',
      'name: "m"\nplatform: "onnx\nmax_batch_size: 1',
      'models/foo/config.pbtxt:2:11: unterminated string literal (strings cannot span lines; close it with ")',
    ],
    ['unterminated string at end of input', "name: 'm", "models/foo/config.pbtxt:1:7: unterminated string literal (strings cannot span lines; close it with ')"],
    ['invalid escape', 'name: "a\\qb"', "models/foo/config.pbtxt:1:9: invalid escape sequence '\\q' in string literal"],
    ['unexpected end inside a message', 'input [\n  { name: "a"', "models/foo/config.pbtxt:2:14: unexpected end of input: '{' opened at 2:3 is never closed with '}' (input[0])"],
    [
      'unexpected end inside a list',
      'input [ { name: "a" }',
      "models/foo/config.pbtxt:1:22: expected ',' or ']' in the list of field 'input': '[' opened at 1:7 is never closed (input)",
    ],
    ['unexpected end after a colon', 'name:', "models/foo/config.pbtxt:1:6: expected a quoted string for field 'name', got end of input (name)"],
    ['missing colon before a scalar', 'name "m"', `models/foo/config.pbtxt:1:6: expected ':' after field 'name', got string "m" (name)`],
    ['list for a singular field', 'name: ["a"]', "models/foo/config.pbtxt:1:7: field 'name' is not repeated, so it cannot take a [list] (name)"],
    ['singular field twice', 'name: "a"\nname: "b"', "models/foo/config.pbtxt:2:1: field 'name' of ModelConfig is not repeated but is specified more than once (name)"],
    [
      'two members of a oneof',
      'max_batch_size: 1\ndynamic_batching {}\nsequence_batching {}',
      "models/foo/config.pbtxt:3:1: field 'sequence_batching' is specified along with field 'dynamic_batching', but only one member of oneof 'scheduling_choice' may be set (sequence_batching)",
    ],
    [
      'scalar where a message goes',
      'version_policy: 3',
      "models/foo/config.pbtxt:1:17: expected '{' to start the ModelVersionPolicy of field 'version_policy', got number 3 (version_policy)",
    ],
    ['int32 out of range', 'max_batch_size: 2147483648', "models/foo/config.pbtxt:1:17: value 2147483648 is out of range for int32 for field 'max_batch_size' (max_batch_size)"],
    [
      'negative unsigned',
      'dynamic_batching { max_queue_delay_microseconds: -1 }',
      "models/foo/config.pbtxt:1:50: value -1 is out of range for uint64 for field 'max_queue_delay_microseconds' (dynamic_batching.max_queue_delay_microseconds)",
    ],
    [
      'int64 beyond the safe range',
      'input [{ dims: [9007199254740992] }]',
      "models/foo/config.pbtxt:1:17: value 9007199254740992 is outside the safe integer range (±9007199254740991) Herd supports for int64 for field 'dims' (input[0].dims[0])",
    ],
    ['number glued to a name', 'max_batch_size: 12abc', "models/foo/config.pbtxt:1:17: malformed number '12a' (a space is needed between a number and what follows)"],
    ['octal with 8 or 9', 'max_batch_size: 09', "models/foo/config.pbtxt:1:17: number '09' starts with 0 and so must be octal, but has digits 8 or 9"],
    ['extension syntax', '[ext.field]: 1', "models/foo/config.pbtxt:1:1: expected a field name of ModelConfig, got '[' (extension and Any fields are not supported)"],
    ['stray closing brace', 'name: "m" }', "models/foo/config.pbtxt:1:11: expected a field name of ModelConfig, got '}'"],
    ['invalid UTF-8', 'name: "\\xff"', "models/foo/config.pbtxt:1:7: string for field 'name' is not valid UTF-8 (name)"],
  ];
  for (const [title, text, message] of cases) {
    it(title, () => {
      const err = parseError(text);
      assert.equal(err.message, message);
    });
  }

  it('sets the error param to the field path', () => {
    assert.equal(parseError('input [{ name: "a" }, { dimz: 1 }]').param, 'input[1]');
  });
});

describe('pbtxt parser: map keys are data', () => {
  it('keeps a __proto__ key as an ordinary entry', () => {
    const m = parse('parameters { key: "__proto__" value { string_value: "x" } }');
    const parameters = m.parameters as MessageValue;
    assert.deepEqual(Object.keys(parameters), ['__proto__']);
    assert.equal(Object.getPrototypeOf(parameters), Object.prototype);
    assert.equal(JSON.stringify(parameters), '{"__proto__":{"string_value":"x"}}');
  });
});
