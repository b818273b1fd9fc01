import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRequestId } from '../../../src/gateway/flow/request-id.ts';

test('request ids are UUIDv7: version 7, RFC variant, the time in the first 48 bits', () => {
  const at = Date.UTC(2026, 11, 1, 6, 0, 0);
  const id = createRequestId(at);
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(parseInt(id.replace(/-/g, '').slice(0, 12), 16), at);
});

test('ids made in order sort in order, within one millisecond too, and never repeat', () => {
  const at = Date.UTC(2026, 11, 1, 7, 0, 0);
  const ids = [...Array.from({ length: 5000 }, () => createRequestId(at)), createRequestId(at + 5)];
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
});

test('a clock that steps back does not break the order', () => {
  const at = Date.UTC(2026, 11, 1, 8, 0, 0);
  const a = createRequestId(at);
  const b = createRequestId(at - 1000);
  assert.ok(b > a);
});
