// Client batches through the real server and the official SDKs, sent on to upstream batch APIs (the fake OpenAI Files +
// Batch API and the fake Anthropic Message Batches): two keys' batches share ONE upstream batch and come back split,
// billed at the batch price; the usage report shows the batch saving beside the exchange-rate saving; a local model's
// lines run realtime at the realtime price; a cancel reaches the upstream batch.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { FakeAnthropicBatches } from '../helpers/fake-anthropic-batches.ts';
import { fakePromptText, fakeTokens } from '../helpers/fake-batch-answers.ts';
import { FakeOpenAIBatches } from '../helpers/fake-openai-batches.ts';
import { ANTHROPIC_KEY, messagesOf, RELAY_KEY, readOutput, startUpstreamHerd, submitChatBatch, toUsd, UPSTREAM_MASTER, type UpstreamHerd, until } from './batches-upstream-herd.ts';

interface LedgerRow {
  request_id: string;
  key_id: string;
  provider: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
  usd_micros: number;
  list_usd_micros: number;
  realtime_list_usd_micros: number | null;
}

describe('client batches sent on to upstream batch APIs', () => {
  let openai: FakeOpenAIBatches;
  let anthropic: FakeAnthropicBatches;
  let herd: UpstreamHerd;

  before(async () => {
    openai = await FakeOpenAIBatches.start({ apiKey: RELAY_KEY });
    anthropic = await FakeAnthropicBatches.start({ apiKey: ANTHROPIC_KEY });
    herd = await startUpstreamHerd('herd-batches-upstream-', { relayUrl: openai.baseUrl, anthropicUrl: anthropic.baseUrl, triton: true });
  });
  after(async () => {
    await herd?.close();
    await openai?.close();
    await anthropic?.close();
  });

  const rowsOf = (batchId: string, count: number) =>
    until(
      () => herd.ledger.prepare('SELECT * FROM ledger_requests WHERE batch_id = ? ORDER BY request_id').all(batchId) as LedgerRow[],
      (rows) => rows.length >= count,
    );
  const creates = () => openai.calls.filter((c) => c.method === 'POST' && c.path === '/v1/batches' && c.status === 200);
  const upstreamOf = (model: string) =>
    until(
      () => [...openai.batches.values()].filter((b) => b.lines[0]?.body.model === model),
      (found) => found.length > 0,
    );

  it("two keys' batches for one model go up as ONE upstream batch, come back split by custom_id, billed at half the realtime price", async () => {
    const [alice, bob] = await Promise.all([
      submitChatBatch(herd.server.httpUrl, herd.keys.alice, 'gpt-4.1', [
        ['same', 'alpha one'],
        ['a2', 'alpha two'],
      ]),
      submitChatBatch(herd.server.httpUrl, herd.keys.bob, 'gpt-4.1', [
        ['same', 'bravo one'],
        ['b2', 'bravo two'],
      ]),
    ]);
    const [upstream] = await upstreamOf('gpt-4.1');
    assert.ok(upstream);
    assert.equal(creates().length, 1, 'one upstream batch create for both client batches');
    assert.equal(upstream.lines.length, 4, "both batches' lines in it");
    const upstreamIds = upstream.lines.map((l) => l.custom_id);
    for (const id of upstreamIds) assert.ok(!['same', 'a2', 'b2'].includes(id), `a client's custom_id went upstream: ${id}`);
    assert.equal(new Set(upstreamIds).size, 4, "the clients' identical custom_ids do not collide upstream");
    assert.deepEqual(openai.runToEnd(upstream.wire.id), 'completed');

    const done = await Promise.all(
      [alice, bob].map(({ client, batch }) =>
        until(
          () => client.batches.retrieve(batch.id),
          (b) => b.status === 'completed',
        ),
      ),
    );
    const expected = [
      { who: alice, texts: { same: 'alpha one', a2: 'alpha two' } as Record<string, string> },
      { who: bob, texts: { same: 'bravo one', b2: 'bravo two' } as Record<string, string> },
    ];
    const requestIds: string[] = [];
    for (const [i, { who, texts }] of expected.entries()) {
      assert.deepEqual(done[i]?.request_counts, { total: 2, completed: 2, failed: 0 });
      const lines = await readOutput(who.client, done[i]?.output_file_id);
      assert.deepEqual(
        lines.map((l) => [l.custom_id, l.response?.status_code, l.response?.body.choices[0]?.message.content]).sort(),
        Object.entries(texts)
          .map(([id, text]) => [id, 200, `echo: ${text}`])
          .sort(),
        "each client gets its own answers under its own custom_ids, and nobody else's",
      );
      const rows = await rowsOf(who.batch.id, 2);
      assert.deepEqual(rows.map((r) => r.request_id).sort(), lines.map((l) => l.response?.request_id).sort(), "each output line's request id is its ledger row's");
      for (const [row, line] of rows.map((r) => [r, lines.find((l) => l.response?.request_id === r.request_id)] as const)) {
        requestIds.push(row.request_id);
        assert.equal(row.provider, 'relay');
        const body = { messages: messagesOf(texts[line?.custom_id ?? ''] ?? '') };
        assert.equal(row.prompt_tokens, fakeTokens(fakePromptText(body)), "the upstream's usage");
        assert.equal(row.completion_tokens, fakeTokens(`echo: ${texts[line?.custom_id ?? '']}`));
        // gpt-4.1 at $2 / $8 per million tokens is 2 and 8 micro-dollars a token realtime; the batch price is half.
        assert.equal(row.list_usd_micros, row.prompt_tokens * 1 + row.completion_tokens * 4, 'billed at the batch price');
        assert.equal(row.realtime_list_usd_micros, row.prompt_tokens * 2 + row.completion_tokens * 8, 'the realtime price for the same usage, kept beside');
        assert.equal(row.realtime_list_usd_micros, 2 * row.list_usd_micros);
        assert.equal(row.cost_micros, row.list_usd_micros, 'the relay charges ¥1 per list dollar');
        assert.equal(row.usd_micros, toUsd(row.cost_micros));
      }
    }
    assert.deepEqual(requestIds.sort(), [...upstreamIds].sort(), "the upstream custom_ids are Herd's request ids");
  });

  it('the usage report shows the batch saving beside the exchange-rate saving', async () => {
    const rows = herd.ledger.prepare('SELECT * FROM ledger_requests').all() as LedgerRow[];
    assert.equal(rows.length, 4, 'the four lines of the first scenario');
    const listUsd = rows.reduce((s, r) => s + r.list_usd_micros, 0);
    const usd = rows.reduce((s, r) => s + r.usd_micros, 0);
    const realtime = rows.reduce((s, r) => s + (r.realtime_list_usd_micros ?? 0), 0);
    type Totals = { currency: string; requests: number; batch_requests: number; batch_saved_usd_micros: number; rate_saved_usd_micros: number; list_usd_micros: number };
    const report = await until(
      async () => {
        const res = await fetch(`${herd.server.httpUrl}/admin/v1/usage?since=1d&by=model`, { headers: { authorization: `Bearer ${UPSTREAM_MASTER}` } });
        assert.equal(res.status, 200);
        return (await res.json()) as { totals: Totals[]; rows: (Totals & { group: string })[] };
      },
      (r) => r.totals[0]?.requests === 4,
    );
    assert.deepEqual(report.totals, [
      {
        ...report.totals[0],
        currency: 'CNY',
        requests: 4,
        batch_requests: 4,
        list_usd_micros: listUsd,
        batch_saved_usd_micros: realtime - listUsd,
        rate_saved_usd_micros: listUsd - usd,
      },
    ]);
    // Half price: the saving from batching is what was paid at list; ¥1 per $ against 7.3 saves 1 - 1/7.3 of that again.
    assert.equal(realtime - listUsd, listUsd);
    assert.ok(Math.abs(listUsd - usd - listUsd * (1 - 1 / 7.3)) <= 4, 'rounding is per row');
    assert.deepEqual(
      report.rows.map((r) => [r.group, r.batch_requests, r.batch_saved_usd_micros]),
      [['gpt-4.1', 4, listUsd]],
    );
  });

  it('Anthropic: messages.batches.create goes up as one Message Batch; results() gives each custom_id its answer', async () => {
    const client = new Anthropic({ apiKey: herd.keys.bob, baseURL: herd.server.httpUrl, maxRetries: 0 });
    const texts: Record<string, string> = { first: 'one', second: 'two', third: 'three', fourth: 'four' };
    const created = await client.messages.batches.create({
      requests: Object.entries(texts).map(([custom_id, text]) => ({ custom_id, params: { model: 'claude-sonnet-4-5', max_tokens: 50, messages: messagesOf(text) } })),
    });
    const upstream = (
      await until(
        () => [...anthropic.batches.values()],
        (b) => b.length > 0,
      )
    )[0];
    assert.ok(upstream);
    assert.equal(anthropic.calls.filter((c) => c.method === 'POST' && c.path === '/v1/messages/batches').length, 1, 'one upstream Message Batch');
    assert.equal(upstream.requests.length, 4);
    for (const r of upstream.requests) assert.ok(!(r.custom_id in texts), "the client's custom_id never goes upstream");
    anthropic.advance(upstream.wire.id);
    const ended = await until(
      () => client.messages.batches.retrieve(created.id),
      (b) => b.processing_status === 'ended',
    );
    assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 4, errored: 0, canceled: 0, expired: 0 });
    const results: [string, string][] = [];
    for await (const entry of await client.messages.batches.results(created.id)) {
      const block = entry.result.type === 'succeeded' ? entry.result.message.content[0] : undefined;
      results.push([entry.custom_id, block?.type === 'text' ? block.text : entry.result.type]);
    }
    assert.deepEqual(
      results,
      Object.entries(texts).map(([id, text]) => [id, `echo: ${text}`]),
    );
    const rows = await rowsOf(created.id, 4);
    assert.deepEqual(rows.map((r) => r.request_id).sort(), upstream.requests.map((r) => r.custom_id).sort());
    for (const row of rows) {
      assert.equal(row.provider, 'anthropic');
      // $3 / $15 per million realtime, half in a batch: 1.5 and 7.5 micro-dollars a token; paid at ¥7.3 per list dollar.
      const listExact = row.prompt_tokens * 1.5 + row.completion_tokens * 7.5;
      assert.equal(row.list_usd_micros, Math.round(listExact));
      assert.equal(row.realtime_list_usd_micros, row.prompt_tokens * 3 + row.completion_tokens * 15);
      assert.equal(row.cost_micros, Math.round(listExact * 7.3));
      assert.equal(row.usd_micros, Math.round(listExact), 'no exchange-rate saving at the official rate');
    }
  });

  it('a local (type: triton) model: lines run realtime with no batch API, billed at the realtime price', async () => {
    const callsBefore = openai.calls.length + anthropic.calls.length;
    const { client, batch } = await submitChatBatch(herd.server.httpUrl, herd.keys.alice, 'local-text', [
      ['l1', 'hello big world'],
      ['l2', 'hello'],
    ]);
    const ended = await until(
      () => client.batches.retrieve(batch.id),
      (b) => b.status === 'completed',
    );
    assert.deepEqual(ended.request_counts, { total: 2, completed: 2, failed: 0 });
    const lines = await readOutput(client, ended.output_file_id);
    assert.deepEqual(
      lines.map((l) => [l.custom_id, l.response?.body.choices[0]?.message.content]),
      [
        ['l1', 'echo: hello big world'],
        ['l2', 'echo: hello'],
      ],
    );
    assert.equal(openai.calls.length + anthropic.calls.length, callsBefore, 'no upstream batch API was called');
    const rows = await rowsOf(batch.id, 2);
    for (const row of rows) {
      assert.equal(row.provider, 'local');
      // local-text at $1 / $2 per million: 1 and 2 micro-dollars a token, the realtime price; nothing saved by batching.
      assert.ok(row.list_usd_micros > 0);
      assert.equal(row.list_usd_micros, row.prompt_tokens + 2 * row.completion_tokens);
      assert.equal(row.realtime_list_usd_micros, row.list_usd_micros);
    }
  });

  it('a cancel while the lines are queued upstream cancels the upstream batch (all its lines are of cancelled batches)', async () => {
    const { client, batch } = await submitChatBatch(
      herd.server.httpUrl,
      herd.keys.alice,
      'gpt-4.1-mini',
      [1, 2, 3, 4].map((n) => [`c${n}`, `line ${n}`]),
    );
    const [upstream] = await upstreamOf('gpt-4.1-mini');
    assert.ok(upstream);
    assert.equal(upstream.lines.length, 4);
    const cancelling = await client.batches.cancel(batch.id);
    assert.ok(['cancelling', 'cancelled'].includes(cancelling.status), cancelling.status);
    const cancelPath = `/v1/batches/${upstream.wire.id}/cancel`;
    await until(
      () => openai.calls.filter((c) => c.method === 'POST' && c.path === cancelPath),
      (calls) => calls.length === 1,
    );
    assert.equal(upstream.wire.status, 'cancelling');
    openai.runToEnd(upstream.wire.id);
    const ended = await until(
      () => client.batches.retrieve(batch.id),
      (b) => b.status === 'cancelled',
    );
    assert.equal(ended.request_counts?.completed, 0);
    const errors = await readOutput(client, ended.error_file_id);
    assert.deepEqual(
      errors.map((l) => [l.custom_id, l.error?.code]),
      [1, 2, 3, 4].map((n) => [`c${n}`, 'batch_cancelled']),
    );
    assert.equal((herd.ledger.prepare('SELECT COUNT(*) AS n FROM ledger_requests WHERE batch_id = ?').get(batch.id) as { n: number }).n, 0, 'nothing answered, nothing billed');
  });
  it("a cancel of one of two batches sharing an upstream batch leaves it running; the cancelled batch's lines answered upstream are billed, not returned", async () => {
    const known = new Set(openai.batches.keys());
    const [alice, bob] = await Promise.all([
      submitChatBatch(herd.server.httpUrl, herd.keys.alice, 'gpt-4.1', [
        ['x1', 'xray one'],
        ['x2', 'xray two'],
      ]),
      submitChatBatch(herd.server.httpUrl, herd.keys.bob, 'gpt-4.1', [
        ['y1', 'yankee one'],
        ['y2', 'yankee two'],
      ]),
    ]);
    const [upstream] = await until(
      () => [...openai.batches.values()].filter((b) => !known.has(b.wire.id)),
      (found) => found.length > 0,
    );
    assert.ok(upstream);
    assert.equal(upstream.lines.length, 4);
    openai.advance(upstream.wire.id);
    openai.progress(upstream.wire.id, 4);
    const cancelled = await alice.client.batches.cancel(alice.batch.id);
    assert.ok(['cancelling', 'cancelled'].includes(cancelled.status), cancelled.status);
    openai.runToEnd(upstream.wire.id);
    const [a, b] = await Promise.all([
      until(
        () => alice.client.batches.retrieve(alice.batch.id),
        (x) => x.status === 'cancelled',
      ),
      until(
        () => bob.client.batches.retrieve(bob.batch.id),
        (x) => x.status === 'completed',
      ),
    ]);
    assert.equal(openai.calls.filter((c) => c.path === `/v1/batches/${upstream.wire.id}/cancel`).length, 0, "bob's lines still want the upstream batch: it is not cancelled");
    assert.deepEqual(
      (await readOutput(bob.client, b.output_file_id)).map((l) => [l.custom_id, l.response?.body.choices[0]?.message.content]),
      [
        ['y1', 'echo: yankee one'],
        ['y2', 'echo: yankee two'],
      ],
    );
    assert.deepEqual(
      (await readOutput(alice.client, a.error_file_id)).map((l) => [l.custom_id, l.error?.code]),
      [
        ['x1', 'batch_cancelled'],
        ['x2', 'batch_cancelled'],
      ],
    );
    // The upstream answered alice's lines before the cancel and bills them: so does Herd, at the batch price.
    const aliceRows = await rowsOf(alice.batch.id, 2);
    for (const row of aliceRows) assert.equal(row.realtime_list_usd_micros, 2 * row.list_usd_micros);
    assert.equal((await rowsOf(bob.batch.id, 2)).length, 2);
  });
  it('Anthropic: messages.batches.cancel while the requests are upstream cancels the Message Batch upstream', async () => {
    const known = new Set(anthropic.batches.keys());
    const client = new Anthropic({ apiKey: herd.keys.alice, baseURL: herd.server.httpUrl, maxRetries: 0 });
    const created = await client.messages.batches.create({
      requests: [1, 2, 3, 4].map((n) => ({ custom_id: `k${n}`, params: { model: 'claude-sonnet-4-5', max_tokens: 20, messages: messagesOf(`kilo ${n}`) } })),
    });
    const [upstream] = await until(
      () => [...anthropic.batches.values()].filter((b) => !known.has(b.wire.id)),
      (found) => found.length > 0,
    );
    assert.ok(upstream);
    const canceling = await client.messages.batches.cancel(created.id);
    assert.ok(['canceling', 'ended'].includes(canceling.processing_status), canceling.processing_status);
    await until(
      () => anthropic.calls.filter((c) => c.method === 'POST' && c.path === `/v1/messages/batches/${upstream.wire.id}/cancel`),
      (calls) => calls.length === 1,
    );
    anthropic.advance(upstream.wire.id);
    const ended = await until(
      () => client.messages.batches.retrieve(created.id),
      (b) => b.processing_status === 'ended',
    );
    assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 0, errored: 0, canceled: 4, expired: 0 });
    const results: [string, string][] = [];
    for await (const entry of await client.messages.batches.results(created.id)) results.push([entry.custom_id, entry.result.type]);
    assert.deepEqual(
      results,
      [1, 2, 3, 4].map((n) => [`k${n}`, 'canceled']),
    );
  });
});
