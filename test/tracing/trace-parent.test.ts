// W3C Trace Context parsing, strict as the spec asks: version 00's exact shape, lowercase hex, no all-zero
// ids, version ff refused, later versions read by their first four fields; tracestate's list rules; inject.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractFromHeaders, extractTraceParent, formatTraceParent, inject, NO_TRACE_PARENT, parseTraceParent, parseTraceState } from '../../src/tracing/trace-parent.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

test('a version-00 traceparent gives its ids, the sampled bit, and remote', () => {
  assert.deepEqual(parseTraceParent(`00-${TRACE}-${SPAN}-01`), { traceId: TRACE, spanId: SPAN, sampled: true, remote: true });
  assert.equal(parseTraceParent(`00-${TRACE}-${SPAN}-00`)?.sampled, false);
  // Other flag bits are ignored, not refused.
  assert.equal(parseTraceParent(`00-${TRACE}-${SPAN}-09`)?.sampled, true);
  assert.equal(parseTraceParent(`00-${TRACE}-${SPAN}-02`)?.sampled, false);
  // Optional whitespace around a header value.
  assert.equal(parseTraceParent(` 00-${TRACE}-${SPAN}-01 `)?.traceId, TRACE);
});

test('invalid traceparents are refused: uppercase, all-zero ids, version ff, wrong lengths, bad separators', () => {
  for (const bad of [
    `00-${TRACE.toUpperCase()}-${SPAN}-01`,
    `00-${TRACE}-${SPAN.toUpperCase()}-01`,
    `0A-${TRACE}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}-0A`,
    `00-00000000000000000000000000000000-${SPAN}-01`,
    `00-${TRACE}-0000000000000000-01`,
    `ff-${TRACE}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}-01-extra`,
    `00-${TRACE}-${SPAN}-1`,
    `00-${TRACE.slice(1)}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}01`,
    `00_${TRACE}_${SPAN}_01`,
    `0-${TRACE}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}-0g`,
    '',
    'garbage',
  ]) {
    assert.equal(parseTraceParent(bad), undefined, bad);
  }
  assert.equal(parseTraceParent(undefined), undefined);
});

test('a later version is read as version 00 reads it, if its extra fields follow a dash', () => {
  assert.deepEqual(parseTraceParent(`01-${TRACE}-${SPAN}-01`), { traceId: TRACE, spanId: SPAN, sampled: true, remote: true });
  assert.equal(parseTraceParent(`cc-${TRACE}-${SPAN}-01-what-the-future-will-bring`)?.spanId, SPAN);
  assert.equal(parseTraceParent(`cc-${TRACE}-${SPAN}-01what`), undefined, 'no dash after the flags');
  assert.equal(parseTraceParent(`cc-${TRACE}-${SPAN}-0`), undefined, 'shorter than 55 characters');
  assert.equal(parseTraceParent(`ff-${TRACE}-${SPAN}-01-x`), undefined, 'ff is never valid');
});

test('tracestate: list members validated, blanks skipped, duplicates and bad keys or values refuse the whole list', () => {
  assert.equal(parseTraceState('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7'), 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
  assert.equal(parseTraceState(['rojo=00f067aa0ba902b7', ' congo=t61rcWkgMzE ']), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
  assert.equal(parseTraceState('a=1,, ,b=2'), 'a=1,b=2');
  assert.equal(parseTraceState('tenant@vendor=x'), 'tenant@vendor=x');
  for (const bad of ['Upper=1', 'a=1,a=2', 'a', '=v', 'a=b=c', 'a=tab\tin', 'a=x,@vendor=y', ',', 'a=\u00e9']) {
    assert.equal(parseTraceState(bad), undefined, bad);
  }
  assert.equal(parseTraceState(Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',')), undefined, 'more than 32 members');
  assert.equal(parseTraceState(Array.from({ length: 32 }, (_, i) => `k${i}=v`).join(','))?.split(',').length, 32);
});

test('extract: HTTP headers and gRPC metadata values; a second traceparent is no traceparent; a bad tracestate is dropped alone', () => {
  const parent = extractFromHeaders({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: 'rojo=1' });
  assert.deepEqual(parent, { traceId: TRACE, spanId: SPAN, sampled: true, remote: true, traceState: 'rojo=1' });
  // gRPC metadata: arrays of values.
  assert.equal(extractTraceParent([`00-${TRACE}-${SPAN}-00`], ['a=1', 'b=2'])?.traceState, 'a=1,b=2');
  assert.equal(extractTraceParent([`00-${TRACE}-${SPAN}-01`, `00-${TRACE}-${SPAN}-01`], undefined), undefined);
  // node:http joins repeated unknown headers with ', ': not a valid traceparent either.
  assert.equal(extractFromHeaders({ traceparent: `00-${TRACE}-${SPAN}-01, 00-${TRACE}-${SPAN}-01` }), undefined);
  assert.equal(extractFromHeaders({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: 'BAD=1' })?.traceState, undefined);
  assert.equal(extractFromHeaders({ tracestate: 'a=1' }), undefined);
});

test('inject writes traceparent (and tracestate) for a valid parent, nothing for none or tracing off', () => {
  const headers: Record<string, string> = {};
  inject({ traceId: TRACE, spanId: SPAN, sampled: true, traceState: 'rojo=1', remote: false }, headers);
  assert.deepEqual(headers, { traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: 'rojo=1' });
  const unsampled: Record<string, string> = {};
  inject({ traceId: TRACE, spanId: SPAN, sampled: false, traceState: undefined, remote: false }, unsampled);
  assert.deepEqual(unsampled, { traceparent: `00-${TRACE}-${SPAN}-00` });
  const none: Record<string, string> = {};
  inject(undefined, none);
  inject(NO_TRACE_PARENT, none);
  assert.deepEqual(none, {});
  // What Herd sends parses back to the same ids.
  const round = parseTraceParent(formatTraceParent({ traceId: TRACE, spanId: SPAN, sampled: true, traceState: undefined, remote: false }));
  assert.equal(round?.traceId, TRACE);
});
