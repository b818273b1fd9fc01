// The trace checked into docs/traces/ (written by scripts/export-example-trace.ts) is OTLP JSON of one smart_chat
// trace with the parentage docs/observability.md describes, and carries no secret.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { flattenRequest, type ReceivedSpan } from '../helpers/otlp-receiver.ts';

const TEXT = readFileSync('docs/traces/smart-chat.otlp.json', 'utf8');

test('docs/traces/smart-chat.otlp.json: one trace, serving steps and the gateway call under the llm step', () => {
  const spans = flattenRequest(JSON.parse(TEXT));
  assert.equal(new Set(spans.map((s) => s.traceId)).size, 1);
  const byName = (name: string) => spans.find((s) => s.name === name) as ReceivedSpan;
  const ensemble = byName('smart_chat');
  assert.equal(ensemble.parentSpanId, byName('InferRequest').spanId);
  for (const step of ['token_counter', 'model_router', 'chat']) assert.equal(byName(step).parentSpanId, ensemble.spanId);
  const chatCompute = spans.find((s) => s.name === 'compute' && s.parentSpanId === byName('chat').spanId) as ReceivedSpan;
  assert.equal(byName('gateway chat').parentSpanId, chatCompute.spanId);
  assert.equal(byName('chat fast-up').parentSpanId, byName('gateway chat').spanId);
  assert.equal(byName('chat fast-up').kind, 3);
});

test('docs/traces/smart-chat.otlp.json holds no key or token', () => {
  assert.doesNotMatch(TEXT, /sk-|bearer|authorization|api[_-]?key|password/i);
});
