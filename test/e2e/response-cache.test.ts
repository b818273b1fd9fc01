// The response cache against the real server, as Triton's: a server-wide cache (local LRU by bytes, or
// Redis), used by models with response_cache enabled; a hit skips execution (the fixture counts them),
// /stats cache_hit / cache_miss and the nv_cache_* metrics count it, metric_tags label every series.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { herdConfigSchema } from '../../src/config/herd-config-schema.ts';
import type { ModelStatistics } from '../../src/serving/stats.ts';
import { parseExposition, sampleValue } from '../metrics/parse-exposition.ts';
import { postJson, request } from './start-test-server.ts';

const CACHE_REPOSITORY = resolve('test/fixtures/cache_repository');
const REDIS_URL = process.env['REDIS_URL'];

async function start(cache: unknown, log: string[] = []): Promise<HerdServer> {
  const config = herdConfigSchema.parse({
    server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, metrics_port: 0 },
    serving: { model_repository: [CACHE_REPOSITORY], ...(cache === undefined ? {} : { cache }) },
  });
  return startHerd(config, { log: (line) => log.push(line) });
}

interface InferBody {
  outputs: { name: string; data: number[] }[];
}

async function infer(server: HerdServer, model: string, values: number[]): Promise<{ out: number[]; execs: number }> {
  const res = await postJson(`${server.httpUrl}/v2/models/${model}/infer`, { inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, values.length], data: values }] });
  assert.equal(res.status, 200, res.body.toString());
  const body = res.json() as InferBody;
  return { out: body.outputs.find((o) => o.name === 'OUT')?.data ?? [], execs: body.outputs.find((o) => o.name === 'EXECS')?.data[0] ?? -1 };
}

async function stats(server: HerdServer, model: string): Promise<ModelStatistics> {
  return ((await request(`${server.httpUrl}/v2/models/${model}/stats`)).json() as { model_stats: ModelStatistics[] }).model_stats[0] as ModelStatistics;
}

async function metrics(server: HerdServer) {
  return parseExposition((await request(`${server.metricsUrl}/metrics`)).body.toString());
}

describe('local response cache', () => {
  it('a repeated request is answered from the cache, counted in /stats and /metrics as Triton does', async () => {
    const server = await start({ local: { size: 1 << 20 } });
    try {
      const first = await infer(server, 'cached_counter', [1, 2, 3]);
      assert.deepEqual(first, { out: [2, 4, 6], execs: 0 });
      const second = await infer(server, 'cached_counter', [1, 2, 3]);
      assert.deepEqual(second, { out: [2, 4, 6], execs: 0 }, 'served from the cache: no second execution');
      const other = await infer(server, 'cached_counter', [1, 2, 4]);
      assert.equal(other.execs, 1, 'different bytes, different entry');
      // Same bytes, another shape: a different request.
      const reshaped = await postJson(`${server.httpUrl}/v2/models/cached_counter/infer`, { inputs: [{ name: 'IN', datatype: 'FP32', shape: [3, 1], data: [1, 2, 3] }] });
      assert.deepEqual((reshaped.json() as InferBody).outputs.find((o) => o.name === 'EXECS')?.data, [2, 2, 2]);

      const s = await stats(server, 'cached_counter');
      assert.equal(s.inference_stats.success.count, 4);
      assert.equal(s.inference_stats.cache_hit.count, 1);
      assert.equal(s.inference_stats.cache_miss.count, 3);
      assert.ok(s.inference_stats.cache_hit.ns > 0 && s.inference_stats.cache_miss.ns > 0);
      assert.equal(s.inference_stats.queue.count, 4);
      assert.equal(s.inference_stats.compute_infer.count, 3, 'a hit computes nothing');
      assert.equal(s.execution_count, 3);
      assert.equal(s.inference_count, 1 + 1 + 3, 'a hit infers nothing');

      const m = await metrics(server);
      const labels = { _team: 'search', _tier: 'gold', model: 'cached_counter', version: '1' };
      assert.equal(sampleValue(m, 'nv_cache_num_hits_per_model', labels), 1);
      assert.equal(sampleValue(m, 'nv_cache_num_misses_per_model', labels), 3);
      assert.equal(sampleValue(m, 'nv_cache_hit_duration_per_model', labels), Math.floor(s.inference_stats.cache_hit.ns / 1000));
      assert.equal(sampleValue(m, 'nv_cache_miss_duration_per_model', labels), Math.floor(s.inference_stats.cache_miss.ns / 1000));
      assert.equal(sampleValue(m, 'nv_inference_request_success', labels), 4);
      assert.equal(sampleValue(m, 'nv_inference_exec_count', labels), 3);
      // metric_tags appear on every family of the model, in Triton's (sorted) label order.
      const line = m.get('nv_inference_count')?.samples.find((x) => x.labels['model'] === 'cached_counter')?.line ?? '';
      assert.match(line, /^nv_inference_count\{_team="search",_tier="gold",model="cached_counter",version="1"\} 5$/);
      // A model without response_cache has no nv_cache_* series and executes every time.
      assert.equal(sampleValue(m, 'nv_cache_num_hits_per_model', { model: 'uncached_counter', version: '1' }), undefined);
      await infer(server, 'uncached_counter', [5]);
      assert.equal((await infer(server, 'uncached_counter', [5])).execs, 1);
    } finally {
      await server.close();
    }
  });

  it('evicts the least recently used entries when the byte budget is full', async () => {
    // One answer of 64 floats is ~400 bytes with its header and key: three fit in 1300 bytes, four do not.
    const server = await start({ local: { size: 1300 } });
    try {
      const values = (k: number) => Array.from({ length: 64 }, (_, i) => i + k * 100);
      for (let k = 0; k < 4; k++) await infer(server, 'cached_counter', values(k));
      assert.equal((await infer(server, 'cached_counter', values(3))).execs, 3, 'the newest entry is kept');
      assert.equal((await infer(server, 'cached_counter', values(0))).execs, 4, 'the oldest entry was evicted');
      const s = await stats(server, 'cached_counter');
      assert.equal(s.inference_stats.cache_hit.count, 1);
      assert.equal(s.inference_stats.cache_miss.count, 5);
    } finally {
      await server.close();
    }
  });

  it('an answer larger than the whole cache is executed every time', async () => {
    const server = await start({ local: { size: 64 } });
    try {
      await infer(server, 'cached_counter', [1, 2, 3]);
      assert.equal((await infer(server, 'cached_counter', [1, 2, 3])).execs, 1);
    } finally {
      await server.close();
    }
  });
});

describe('no response cache configured', () => {
  it('response_cache { enable: true } caches nothing, as in Triton, and the load log says so', async () => {
    const log: string[] = [];
    const server = await start(undefined, log);
    try {
      await infer(server, 'cached_counter', [1]);
      assert.equal((await infer(server, 'cached_counter', [1])).execs, 1);
      assert.ok(
        log.some((l) => /model 'cached_counter'.*response_cache\.enable.*no response cache/.test(l)),
        log.join('\n'),
      );
      const s = await stats(server, 'cached_counter');
      assert.equal(s.inference_stats.cache_hit.count + s.inference_stats.cache_miss.count, 0);
    } finally {
      await server.close();
    }
  });
});

describe('redis response cache', { skip: REDIS_URL ? false : 'REDIS_URL is not set: the Redis cache suite needs a real Redis' }, () => {
  it('two servers sharing one Redis share the cached answers', async () => {
    const url = new URL(REDIS_URL ?? 'redis://127.0.0.1:6379');
    const prefix = `herd-test:infer:${randomUUID()}:`;
    const cache = { redis: { host: url.hostname, port: Number(url.port || 6379), key_prefix: prefix } };
    const a = await start(cache);
    const b = await start(cache);
    const client = new Redis(REDIS_URL ?? '');
    try {
      assert.equal((await infer(a, 'cached_counter', [7, 8])).execs, 0);
      const fromB = await infer(b, 'cached_counter', [7, 8]);
      assert.deepEqual(fromB, { out: [14, 16], execs: 0 }, "b's instance never executed: the answer came from Redis");
      assert.equal((await stats(b, 'cached_counter')).inference_stats.cache_hit.count, 1);
      assert.equal((await stats(a, 'cached_counter')).inference_stats.cache_miss.count, 1);
      const keys = await client.keys(`${prefix}*`);
      assert.equal(keys.length, 1);
    } finally {
      await a.close();
      await b.close();
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(...keys);
      client.disconnect();
    }
  });

  it('a Redis that cannot be reached fails the start with the reason', async () => {
    await assert.rejects(start({ redis: { host: '127.0.0.1', port: 1, connect_timeout: 500 } }), /cannot connect to Redis at 127\.0\.0\.1:1/);
  });
});
