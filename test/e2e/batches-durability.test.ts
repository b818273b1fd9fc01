// Batch durability (issue #33): two `herd serve` replicas on one PostgreSQL share a batch; the one holding lines
// mid-call is SIGKILLed, the other takes its lines over once their leases expire and ends the batch. Every line is
// answered once in the output file and billed once in the ledger (the killed replica's spooled rows arrive when it
// restarts); an upstream call cut by the kill is sent again, so calls exceed lines by at most the lines in flight.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pause, sendJson, startMockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { skipWithoutPostgres } from '../gateway/billing/pg-test-schema.ts';
import { openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { type BatchReplicas, ledgerRows, lineRows, ownedBy, readOutput, startBatchReplicas, submitBatch, until } from './batch-replicas.ts';
import { type HerdProcess, stopHerd } from './spawn-herd.ts';

const skip = skipWithoutPostgres('batches-durability.test.ts');
const LINES = 40;
const CONCURRENCY = 2;
/** The worker keeps up to twice its concurrency of realtime lines in flight per replica. */
const IN_FLIGHT = CONCURRENCY * 2;

const REALTIME_BATCH = `  worker: { lease_ms: 1500, interval_ms: 50 }
  realtime: { concurrency: ${CONCURRENCY} }
  upstream: { providers: [] }`;

/** What the mock upstream answers a line's content with (the test checks each line got its own). */
const answerTo = (content: string) => `answer to ${content}`;

interface Round {
  batchId: string;
  calls: number;
  takenOver: number;
}

/**
 * Submits a batch on `submitTo`, waits until `victim` holds lines mid-call (and some have succeeded), SIGKILLs it,
 * waits for `survivor` to end the batch, restarts the victim (its spool replays its rows) and checks the batch.
 */
async function killMidBatch(
  replicas: BatchReplicas,
  tag: string,
  submitTo: HerdProcess,
  victim: HerdProcess,
  survivor: HerdProcess,
  restartAs: string,
  callsFor: (tag: string) => Map<string, number>,
): Promise<{ round: Round; restarted: HerdProcess }> {
  const { database, secret } = replicas;
  const batchId = await submitBatch(submitTo, secret, tag, LINES);
  const atKill = await until(
    `${tag}: the victim running lines after some succeeded`,
    () => lineRows(database, batchId),
    (rows) => rows.some((r) => r.state === 'running' && ownedBy(victim)(r)) && rows.filter((r) => r.state === 'succeeded').length >= 4,
  );
  assert.equal(await stopHerd(victim, 'SIGKILL'), 'SIGKILL');
  const victimsLines = new Set(atKill.filter((r) => r.state === 'running' && ownedBy(victim)(r)).map((r) => r.line_no));
  assert.ok(
    atKill.some((r) => r.state !== 'succeeded'),
    'the batch was still running at the kill',
  );

  await until(
    `${tag}: the survivor ends the batch`,
    async () => (await readBatchStatus(survivor, secret, batchId)).status,
    (status) => status === 'completed',
  );
  // The killed replica's spool holds rows of lines it answered and had not yet flushed: its restart replays them.
  const restarted = await replicas.start(restartAs);

  const { batch, lines } = await readOutput(survivor, secret, batchId);
  assert.deepEqual(batch.request_counts, { total: LINES, completed: LINES, failed: 0 });
  assert.equal(batch.error_file_id, null, 'no line errored');
  assert.equal(lines.length, LINES, 'one output line per request');
  assert.deepEqual(lines.map((l) => l.custom_id).sort(), Array.from({ length: LINES }, (_, i) => `c${i}`).sort(), 'each custom_id exactly once');
  for (const line of lines) {
    const i = line.custom_id.slice(1);
    assert.equal(line.error, null, `${line.custom_id} has no error`);
    assert.equal(line.response?.status_code, 200);
    assert.equal(line.response?.body.choices[0]?.message.content, answerTo(`line ${tag} ${i}`), `${line.custom_id} got its own answer`);
  }

  const rows = await until(
    `${tag}: one ledger row per line`,
    () => ledgerRows(database, batchId),
    (r) => r.length >= LINES,
  );
  assert.equal(rows.length, LINES, 'one ledger row per line (request_id is the primary key)');
  assert.deepEqual(rows.map((r) => r.request_id).sort(), lines.map((l) => l.response?.request_id).sort(), "each output line's request id is its ledger row's");
  assert.ok(
    rows.every((r) => r.status === 'ok' && Number(r.cost_micros) > 0),
    `every row answered and charged: ${JSON.stringify(rows.filter((r) => r.status !== 'ok'))}`,
  );

  const calls = callsFor(tag);
  assert.equal(calls.size, LINES, 'every line reached the upstream');
  const total = [...calls.values()].reduce((a, b) => a + b, 0);
  assert.ok(total <= LINES + IN_FLIGHT, `upstream calls ${total} ≤ ${LINES} lines + ${IN_FLIGHT} in flight at the kill`);
  assert.ok(
    [...calls.values()].every((n) => n <= 2),
    'no line sent more than twice',
  );
  return { round: { batchId, calls: total, takenOver: victimsLines.size }, restarted };
}

async function readBatchStatus(herd: HerdProcess, secret: string, batchId: string): Promise<{ status: string }> {
  const res = await fetch(`${herd.url}/v1/batches/${batchId}`, { headers: { authorization: `Bearer ${secret}` } });
  assert.equal(res.status, 200);
  return (await res.json()) as { status: string };
}

test('realtime lines: SIGKILL mid-batch, the other replica takes over; restart, then the same the other way round', { skip, timeout: 240_000 }, async (t) => {
  // Slow enough that the victim has lines mid-call when it dies; each call logged with its line's content.
  const upstream = await startMockUpstream(async (req, res) => {
    await pause(150);
    const body = req.body as { model: string; messages: { content: string }[] };
    sendJson(res, 200, openAICompletion(body.model, answerTo(body.messages[0]?.content ?? '')));
  });
  t.after(() => upstream.close());
  const callsFor = (tag: string) => {
    const calls = new Map<string, number>();
    for (const r of upstream.requests) {
      const content = (r.body as { messages: { content: string }[] }).messages[0]?.content ?? '';
      if (content.startsWith(`line ${tag} `)) calls.set(content, (calls.get(content) ?? 0) + 1);
    }
    return calls;
  };
  const replicas = await startBatchReplicas(
    'h_batch_durable',
    REALTIME_BATCH,
    `  relay: { type: openai, base_url: "${upstream.url}/v1", api_key_env: RELAY_API_KEY, timeout_ms: 5000, retry: { attempts: 1 } }`,
  );
  t.after(() => replicas.close());
  // The first start migrates; the second finds the schema in place.
  const a = await replicas.start('a');
  const b = await replicas.start('b');

  const first = await killMidBatch(replicas, 'one', a, a, b, 'a', callsFor);
  const second = await killMidBatch(replicas, 'two', first.restarted, b, first.restarted, 'b', callsFor);
  for (const [name, round] of [
    ['A killed, B took over', first.round],
    ['B killed, restarted A took over', second.round],
  ] as const) {
    t.diagnostic(`${name}: ${LINES} lines, ${round.calls} upstream calls, ${round.takenOver} lines running on the victim at the kill`);
  }
});
