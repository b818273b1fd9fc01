// An llm model (not decoupled) whose KServe client leaves while the upstream call runs (issue #32): the
// upstream request is aborted and the ledger settles the call as CANCELLED, with no fallback to another model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { pause } from '../../gateway/helpers/mock-upstream.ts';
import { llmModel, startGatewayHerd, writeModels } from './llm-fixtures.ts';

test('a KServe client that leaves mid-call aborts the upstream call; the ledger row is CANCELLED', async () => {
  const herd = await startGatewayHerd([writeModels({ chat: llmModel('chat', { count: 1 }) })], { balancedUpstream: 'hold-up' });
  try {
    const req = http.request(`${herd.server.httpUrl}/v2/models/chat/infer`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1], data: ['tell me a long story'] }] }));
    for (let i = 0; i < 400 && herd.upstream.holding === 0; i++) await pause(10);
    assert.equal(herd.upstream.holding, 1, 'the upstream call is running');
    req.destroy();
    for (let i = 0; i < 400 && herd.upstream.closedEarly === 0; i++) await pause(10);
    assert.equal(herd.upstream.closedEarly, 1, 'the upstream request was aborted');
    await herd.waitForLedgerRows(1);
  } finally {
    await herd.close();
  }
  const rows = herd.ledgerRows();
  assert.equal(rows.length, 1, 'one row: the aborted call did not fall back to another model');
  const row = rows[0] as Record<string, unknown>;
  // As /v1 settles a non-streaming call its client left: an error row (its code, its status), no usage, since
  // the upstream never reported any. A streaming call bills what was delivered (llm-backend.test.ts).
  assert.equal(row['status'], 'CANCELLED');
  assert.equal(row['http_status'], 400);
  assert.equal(row['origin'], 'triton:chat/1');
  assert.equal(row['completion_tokens'], 0, 'nothing was delivered');
  assert.equal(row['cost_micros'], 0);
});
