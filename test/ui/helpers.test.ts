// The console's pure helpers (ui/src/format.ts, sse.ts, kserve-form.ts), run under Node: money from micros
// exactly, the SSE splitter over any chunking, and the KServe infer body from the form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decimalToMicros, microsToDecimal, money } from '../../ui/src/format.ts';
import { defaultData, defaultShape, inferBody, parseData } from '../../ui/src/kserve-form.ts';
import { SseSplitter } from '../../ui/src/sse.ts';

test('micros become decimals exactly, with at least two places, in the currency named', () => {
  assert.equal(microsToDecimal(0), '0.00');
  assert.equal(microsToDecimal(1_500_000), '1.50');
  assert.equal(microsToDecimal(1_234_567), '1.234567');
  assert.equal(microsToDecimal(1_234_000_000), '1,234.00');
  assert.equal(microsToDecimal(-2_468), '-0.002468');
  assert.equal(money(3_456_789, 'EUR'), 'EUR 3.456789');
  assert.equal(money(null, 'EUR'), '—');
});

test('a typed amount becomes micros without floating point', () => {
  assert.equal(decimalToMicros('12.5'), 12_500_000);
  assert.equal(decimalToMicros('0.000001'), 1);
  assert.equal(decimalToMicros('25'), 25_000_000);
  assert.equal(decimalToMicros('1.0000001'), undefined);
  assert.equal(decimalToMicros('abc'), undefined);
});

test('the SSE splitter yields the same events however the bytes are chunked', () => {
  const text = 'data: {"a":1}\n\n: ping\n\ndata: line1\r\ndata: line2\r\n\r\ndata: [DONE]\n\n';
  const whole = new SseSplitter().push(text);
  assert.deepEqual(whole, ['{"a":1}', 'line1\nline2', '[DONE]']);
  for (let size = 1; size < 8; size++) {
    const splitter = new SseSplitter();
    const events: string[] = [];
    for (let i = 0; i < text.length; i += size) events.push(...splitter.push(text.slice(i, i + size)));
    events.push(...splitter.flush());
    assert.deepEqual(events, whole, `chunks of ${size}`);
  }
});

test('the infer form prefills small inputs and builds the KServe body from what was typed', () => {
  const meta = { name: 'INPUT0', datatype: 'INT32', shape: [-1, 4] };
  assert.deepEqual(defaultShape(meta), [1, 4]);
  assert.equal(defaultData(meta), '[0, 0, 0, 0]');
  assert.equal(defaultData({ name: 'big', datatype: 'FP32', shape: [1, 3, 224, 224] }), '');
  assert.deepEqual(parseData('[[1, 2], [3, 4]]', 'FP32'), [1, 2, 3, 4]);
  assert.deepEqual(parseData('1 2, 3', 'INT32'), [1, 2, 3]);
  assert.deepEqual(parseData('["a", "b"]', 'BYTES'), ['a', 'b']);
  assert.deepEqual(inferBody([meta], { INPUT0: { shape: '2, 2', data: '1,2,3,4' } }), { inputs: [{ name: 'INPUT0', shape: [2, 2], datatype: 'INT32', data: [1, 2, 3, 4] }] });
  assert.throws(() => inferBody([meta], { INPUT0: { shape: '1, 4', data: '1,2' } }), /needs 4 values, got 2/);
  assert.throws(() => parseData('1, x', 'FP32'), /not a number/);
});
