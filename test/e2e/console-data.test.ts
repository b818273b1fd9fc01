// The console's data API on the real server (startHerd, a SQLite ledger in a temp dir, a fake upstream,
// Triton's `simple` models in explicit mode): overview, requests (detail before the ledger flush), the
// live tail, spend JSON and CSV, the range cap, serving models/stats/load/unload, a viewer's limits, OpenAPI.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HerdServer, startHerd } from '../../src/app.ts';
import { describeConfigSources } from '../../src/config/describe-config-sources.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { type MockUpstream, sendJson, startMockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { openSse } from '../http/console/console-test-app.ts';
import { TRITON_REPOSITORY } from './start-test-server.ts';

const MASTER = 'sk-herd-master-key-for-the-console-tests-0123456789';

async function startConsoleHerd(upstream: MockUpstream, mode: 'explicit' | 'none'): Promise<HerdServer> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-console-e2e-'));
  for (const m of ['simple', 'simple_int8']) cpSync(join(TRITON_REPOSITORY, m), join(dir, 'models', m), { recursive: true });
  const yaml = `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0, allow_grpc: false }
serving: { model_repository: [./models], model_control_mode: ${mode}, load_model: [simple], strict_readiness: false }
auth: { master_key_env: HERD_CONSOLE_TEST_MASTER, db: ./keys.db }
billing: { currency: CNY, fx: { USD: 7.3 }, ledger: "sqlite:./ledger.db", flush_interval_ms: 600000 }
providers:
  relay: { type: openai, base_url: "${upstream.url}/v1", api_key_env: RELAY_API_KEY }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay }]
`;
  const config = parseHerdConfig(yaml, join(dir, 'herd.yaml'));
  // As herd serve does: the explicit-mode server describes its configuration for GET /admin/v1/settings.
  const configSources = mode === 'explicit' ? describeConfigSources({ config, file: { path: join(dir, 'herd.yaml'), text: yaml } }) : undefined;
  return startHerd(config, { env: { HERD_CONSOLE_TEST_MASTER: MASTER, RELAY_API_KEY: 'sk-up' }, ...(configSources ? { configSources } : {}) });
}

describe('the console data API on the real server', () => {
  let upstream: MockUpstream;
  let server: HerdServer;
  let viewer: string;
  before(async () => {
    upstream = await startMockUpstream((_req, res) => sendJson(res, 200, openAICompletion('gpt-4.1', 'hello')));
    server = await startConsoleHerd(upstream, 'explicit');
    const created = await call('POST', '/admin/v1/keys', { name: 'watcher', role: 'viewer' }, { 'idempotency-key': 'watcher' });
    assert.equal(created.status, 201, created.text);
    viewer = (created.json as { secret: string }).secret;
  });
  after(async () => {
    await server?.close();
    await upstream?.close();
  });

  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${server.httpUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${MASTER}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json: json as Record<string, unknown> };
  }
  const chat = (content: string) => call('POST', '/v1/chat/completions', { model: 'gpt-4.1', messages: [{ role: 'user', content }] });

  it('a request reaches the tail and its detail before the ledger flush, then the list once flushed', async () => {
    const tail = await openSse(`${server.httpUrl}/admin/v1/requests/tail?model=gpt-4.1`, viewer);
    assert.equal(tail.status, 200);
    const answer = await chat('first');
    assert.equal(answer.status, 200, answer.text);
    const id = answer.headers.get('x-request-id') as string;
    assert.ok(id);
    await tail.until((s) => s.includes(`"request_id":"${id}"`));
    tail.close();
    // The flush interval is 10 minutes: this detail comes from the replica's recent ring.
    const detail = await call('GET', `/admin/v1/requests/${id}`, undefined, { authorization: `Bearer ${viewer}` });
    assert.equal(detail.status, 200, detail.text);
    assert.equal(detail.json.status, 'ok');
    assert.equal(detail.json.prompt_tokens, 12);
    assert.equal(detail.json.currency, 'CNY');
    assert.equal((detail.json.attempts as unknown[]).length, 1);
    const missing = await call('GET', '/admin/v1/requests/no-such-request');
    assert.equal(missing.status, 404);
    assert.equal((missing.json.error as { code: string }).code, 'not_found');
    await chat('second');
    await server.flushLedger();
    const list = await call('GET', '/admin/v1/requests?model=gpt-4.1&status=ok&since=1h&limit=1');
    assert.equal(list.status, 200, list.text);
    const rows = list.json.data as { request_id: string }[];
    assert.equal(rows.length, 1);
    assert.equal(typeof list.json.next_cursor, 'string');
    const next = await call('GET', `/admin/v1/requests?model=gpt-4.1&limit=1&cursor=${encodeURIComponent(list.json.next_cursor as string)}`);
    assert.notEqual((next.json.data as { request_id: string }[])[0]?.request_id, rows[0]?.request_id);
    const errorsOnly = await call('GET', '/admin/v1/requests?status=error');
    assert.deepEqual(errorsOnly.json.data, []);
  });

  it('overview: traffic from the feed, spend and top keys from the ledger', async () => {
    await server.flushLedger();
    // The traffic window leaves out the second still filling: wait for the requests' second to close.
    let overview = await call('GET', '/admin/v1/overview', undefined, { authorization: `Bearer ${viewer}` });
    while ((overview.json.traffic as { series: { requests: number }[] }).series.reduce((s, p) => s + p.requests, 0) < 2) {
      await new Promise((r) => setTimeout(r, 100));
      overview = await call('GET', '/admin/v1/overview', undefined, { authorization: `Bearer ${viewer}` });
    }
    assert.equal(overview.status, 200, overview.text);
    const spend = overview.json.spend as { currency: string; today: { requests: number; cost_micros: number } };
    assert.equal(spend.currency, 'CNY');
    assert.ok(spend.today.requests >= 2);
    assert.ok(spend.today.cost_micros > 0);
    assert.equal((overview.json.top_models as { model: string }[])[0]?.model, 'gpt-4.1');
    assert.equal((overview.json.top_keys as { id: string }[])[0]?.id, 'master');
    const models = overview.json.models as { ready: number; total: number };
    // simple (loaded), simple_int8 (not loaded in explicit mode), gpt-4.1.
    assert.equal(models.ready, 2);
    assert.equal(models.total, 2);
  });

  it('spend JSON and CSV hold the same rows; a range over 400 days is refused', async () => {
    await server.flushLedger();
    const json = await call('GET', '/admin/v1/spend?by=model&since=7d');
    assert.equal(json.status, 200, json.text);
    const rows = json.json.data as { group: string; requests: number; cost_micros: number }[];
    assert.equal(json.json.total_groups, rows.length);
    const csv = await call('GET', '/admin/v1/spend.csv?by=model&since=7d');
    assert.equal(csv.status, 200);
    assert.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.match(String(csv.headers.get('content-disposition')), /^attachment; filename="herd-spend-by-model-/);
    const lines = csv.text.trimEnd().split('\r\n');
    assert.equal(lines[0]?.split(',')[0], 'model');
    assert.deepEqual(
      lines.slice(1).map((l) => {
        const cells = l.split(',');
        return [cells[0], Number(cells[3]), Math.round(Number(cells[10]) * 1e6)];
      }),
      rows.map((r) => [r.group, r.requests, r.cost_micros]),
    );
    const wide = await call('GET', '/admin/v1/spend?since=2020-01-01');
    assert.equal(wide.status, 400);
    assert.match((wide.json.error as { message: string }).message, /400 days/);
    const badBy = await call('GET', '/admin/v1/spend?by=colour');
    assert.equal(badBy.status, 400);
  });

  it('deployments with their breakers; the described settings', async () => {
    const deployments = await call('GET', '/admin/v1/deployments', undefined, { authorization: `Bearer ${viewer}` });
    assert.deepEqual(deployments.json.data, [{ model: 'gpt-4.1', provider: 'relay', upstream_model: 'gpt-4.1', kind: 'chat', breaker: 'closed', healthy: true }]);
    const settings = await call('GET', '/admin/v1/settings', undefined, { authorization: `Bearer ${viewer}` });
    assert.equal(settings.status, 200, settings.text);
    assert.match(String(settings.json.config_file), /herd\.yaml$/);
    const port = (settings.json.entries as { path: string; value: unknown; source: string }[]).find((e) => e.path === 'server.http_port');
    assert.equal(port?.value, 0);
    assert.match(String(port?.source), /^herd\.yaml:\d+:\d+$/);
  });

  it('serving models and stats; load and unload in explicit mode, refused to a viewer', async () => {
    const models = await call('GET', '/admin/v1/serving/models', undefined, { authorization: `Bearer ${viewer}` });
    assert.equal(models.status, 200, models.text);
    assert.equal(models.json.model_control_mode, 'explicit');
    const data = models.json.data as { name: string; state: string | null; backend: string | null; config: { name: string } | null; max_batch_size: number | null }[];
    const simple = data.find((m) => m.name === 'simple');
    assert.equal(simple?.state, 'READY');
    assert.equal(simple?.config?.name, 'simple');
    assert.equal(typeof simple?.max_batch_size, 'number');
    assert.equal(data.find((m) => m.name === 'simple_int8')?.state, null);
    const denied = await call('POST', '/admin/v1/serving/models/simple_int8/load', undefined, { authorization: `Bearer ${viewer}` });
    assert.equal(denied.status, 403);
    // An admin key that is not the master key: the model-repository group needs the master key here as on /v2/repository.
    const admin = await call('POST', '/admin/v1/keys', { name: 'operator', role: 'admin' }, { 'idempotency-key': 'operator' });
    const byAdmin = await call('POST', '/admin/v1/serving/models/simple_int8/load', undefined, { authorization: `Bearer ${(admin.json as { secret: string }).secret}` });
    assert.equal(byAdmin.status, 403, byAdmin.text);
    assert.match(byAdmin.text, /needs the master key/);
    const loaded = await call('POST', '/admin/v1/serving/models/simple_int8/load');
    assert.equal(loaded.status, 200, loaded.text);
    assert.deepEqual(loaded.json, { name: 'simple_int8', action: 'load', state: 'READY' });
    const infer = await fetch(`${server.httpUrl}/v2/models/simple/infer`, {
      method: 'POST',
      body: JSON.stringify({
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(2) },
        ],
      }),
    });
    assert.equal(infer.status, 200);
    const stats = await call('GET', '/admin/v1/serving/stats', undefined, { authorization: `Bearer ${viewer}` });
    const simpleStats = (stats.json.data as { name: string; inference_count: number; success: { count: number } }[]).find((s) => s.name === 'simple');
    assert.equal(simpleStats?.inference_count, 1);
    assert.equal(simpleStats?.success.count, 1);
    const unloaded = await call('POST', '/admin/v1/serving/models/simple_int8/unload', {});
    assert.equal(unloaded.status, 200, unloaded.text);
    assert.equal(unloaded.json.state, 'UNAVAILABLE');
  });

  it('the OpenAPI document lists the console routes', async () => {
    const doc = (await call('GET', '/admin/v1/openapi.json')).json as {
      paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, unknown> }> }>>;
    };
    for (const path of [
      '/admin/v1/overview',
      '/admin/v1/requests',
      '/admin/v1/requests/{id}',
      '/admin/v1/requests/tail',
      '/admin/v1/spend',
      '/admin/v1/spend.csv',
      '/admin/v1/deployments',
      '/admin/v1/settings',
      '/admin/v1/serving/models',
      '/admin/v1/serving/stats',
      '/admin/v1/serving/models/{name}/load',
      '/admin/v1/serving/models/{name}/unload',
    ]) {
      assert.ok(doc.paths[path], path);
    }
    assert.ok(doc.paths['/admin/v1/requests/tail']?.get?.responses['200']?.content['text/event-stream']);
    assert.ok(doc.paths['/admin/v1/spend.csv']?.get?.responses['200']?.content['text/csv']);
  });
});

describe('serving load/unload outside explicit mode', () => {
  it("is 400 in Triton's words", async () => {
    const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, openAICompletion('gpt-4.1', 'x')));
    const server = await startConsoleHerd(upstream, 'none');
    try {
      const res = await fetch(`${server.httpUrl}/admin/v1/serving/models/simple/unload`, { method: 'POST', headers: { authorization: `Bearer ${MASTER}` } });
      assert.equal(res.status, 400);
      const body = (await res.json()) as { error: { message: string } };
      assert.equal(body.error.message, 'explicit model load / unload is not allowed if polling is enabled');
      const models = (await (await fetch(`${server.httpUrl}/admin/v1/serving/models`, { headers: { authorization: `Bearer ${MASTER}` } })).json()) as {
        model_control_mode: string;
      };
      assert.equal(models.model_control_mode, 'none');
      // startHerd without configSources (no file, no flags): every value is described, from its default or as given.
      const settings = await fetch(`${server.httpUrl}/admin/v1/settings`, { headers: { authorization: `Bearer ${MASTER}` } });
      assert.equal(settings.status, 200);
      const described = (await settings.json()) as { config_file: string | null; entries: { path: string; source: string }[] };
      assert.equal(described.config_file, null);
      assert.ok(described.entries.some((e) => e.path === 'server.http_port'));
    } finally {
      await server.close();
      await upstream.close();
    }
  });
});
