// The hand-sized OTLP encoder against protobufjs reading the official messages: every value kind, negative
// and large integers, non-ASCII text, nanosecond times past 2^53, and sizes that need multi-byte lengths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeOtlpTraces } from '../../src/tracing/encode-otlp-traces.ts';
import { RecordedSpan } from '../../src/tracing/recorded-span.ts';
import { SpanKind } from '../../src/tracing/tracer.ts';
import { flattenRequest, loadOtlpTypes } from '../helpers/otlp-receiver.ts';

const types = loadOtlpTypes();
const decode = (bytes: Uint8Array) => flattenRequest(types.request.toObject(types.request.decode(bytes), { longs: String }));

function span(name: string, startMs: number): RecordedSpan {
  return new RecordedSpan(name, SpanKind.CLIENT, 'f'.repeat(32), '1'.repeat(16), '2'.repeat(16), false, undefined, startMs, () => undefined);
}

test('every attribute value kind decodes to what was set', () => {
  const s = span('kinds', 1_700_000_000_000);
  const values = {
    str: 'héllo ✓ 日本',
    empty: '',
    yes: true,
    no: false,
    zero: 0,
    small: 5,
    big: 2 ** 40 + 3,
    maxSafe: Number.MAX_SAFE_INTEGER,
    negative: -1,
    veryNegative: -(2 ** 40) - 7,
    minSafe: Number.MIN_SAFE_INTEGER,
    double: 0.1,
    negativeDouble: -2.5e-7,
    huge: 1e300,
    strings: ['a', 'bé'],
    numbers: [1, -2, 3.5],
    bools: [true, false],
    none: [] as string[],
  };
  s.setAttributes(values);
  s.end(1_700_000_000_001);
  const [decoded] = decode(encodeOtlpTraces([s], { attributes: { 'service.name': 'x' }, scopeName: 'herd', scopeVersion: '1' }));
  assert.deepEqual(decoded?.attributes, values);
});

test('times are exact nanoseconds from epoch milliseconds with microsecond fractions, past 2^53 ns', () => {
  for (const ms of [0, 1, 1_700_000_000_000.001, 1_800_000_000_000.999, 4_102_444_800_000.5, 1_765_000_000_123.457]) {
    const s = span('t', ms);
    s.end(ms);
    const [decoded] = decode(encodeOtlpTraces([s], { attributes: {}, scopeName: 'h', scopeVersion: '' }));
    const whole = Math.floor(ms);
    const expected = BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1000) * 1000);
    assert.equal(decoded?.startTimeUnixNano, expected, String(ms));
  }
});

test('large spans (multi-byte lengths), many spans, events, status and dropped counts decode whole', () => {
  const spans: RecordedSpan[] = [];
  for (let i = 0; i < 300; i++) {
    const s = span(`span ${i} ${'x'.repeat(i)}`, 1_700_000_000_000 + i);
    s.setAttribute('long', 'y'.repeat(i * 100));
    for (let k = 0; k < 140; k++) s.setAttribute(`k${k}`, k);
    s.addEvent('e', { n: i, t: 'ü' }, 1_700_000_000_000.5);
    s.addEvent('bare');
    if (i % 2 === 0) s.recordError(new TypeError('bad ✗'));
    s.end(1_700_000_000_500);
    spans.push(s);
  }
  const decoded = decode(encodeOtlpTraces(spans, { attributes: { 'service.name': 'x' }, scopeName: 'herd', scopeVersion: '1' }));
  assert.equal(decoded.length, 300);
  assert.equal(decoded[299]?.attributes['long'], 'y'.repeat(29_900));
  assert.equal(decoded[7]?.droppedAttributesCount, 13);
  assert.deepEqual(decoded[4]?.status, { code: 2, message: 'bad ✗' });
  assert.deepEqual(decoded[5]?.status, { code: 0, message: '' });
  assert.deepEqual(
    decoded[3]?.events.map((e) => [e.name, e.attributes]),
    [
      ['e', { n: 3, t: 'ü' }],
      ['bare', {}],
    ],
  );
  assert.equal(decoded[0]?.flags, 0x101);
});

test('the second encoding (keys, names, resource from their cached bytes) is byte for byte the first, and decodes the same', () => {
  const resource = { attributes: { 'service.name': 'x', 'a.long.resource.attribute': 'v'.repeat(200) }, scopeName: 'herd', scopeVersion: '1' };
  const make = () => {
    const s = span(`cached ${'é'.repeat(3)}`, 1_700_000_000_000);
    s.setAttributes({ 'key.one': 'a', 'kéy.two': 2, [`long.${'k'.repeat(150)}`]: true });
    s.addEvent('an event', { 'event.key': 'x' }, 1_700_000_000_000.5);
    s.end(1_700_000_000_001);
    return s;
  };
  const first = Buffer.from(encodeOtlpTraces([make()], resource));
  const second = Buffer.from(encodeOtlpTraces([make(), make()], resource));
  const third = Buffer.from(encodeOtlpTraces([make()], resource));
  assert.ok(first.equals(third));
  const [a, b] = decode(second);
  assert.deepEqual(a, b);
  assert.deepEqual(decode(first)[0], a);
  assert.equal(a?.resource['a.long.resource.attribute'], 'v'.repeat(200));
  assert.equal(a?.events[0]?.name, 'an event');
});
