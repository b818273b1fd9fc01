// The framework-free infer path under a full queue: it refuses with 503 before decoding the body (a body
// that would not even parse gets the same 503), counts the refusal like the scheduler does, and the
// connection stays usable. The model is the batching fixture with one level and a queue of 2.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import { request, startTestServer } from '../e2e/start-test-server.ts';

let server: HerdServer;
let repo = '';
before(async () => {
  repo = mkdtempSync(join(tmpdir(), 'herd-fast-infer-'));
  cpSync(resolve('test/fixtures/batching_repository/batch_echo'), join(repo, 'batch_echo'), { recursive: true });
  const configPath = join(repo, 'batch_echo', 'config.pbtxt');
  const config = readFileSync(configPath, 'utf8')
    .replace(/dynamic_batching \{.*?\n\}\n/s, 'dynamic_batching { default_queue_policy { max_queue_size: 2 } }\n')
    .replace('string_value: "150"', 'string_value: "300"');
  writeFileSync(configPath, config);
  server = await startTestServer({ repositories: [repo] });
});
after(async () => {
  await server.close();
  rmSync(repo, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: string;
}
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** A bare node:http POST (no Accept-Encoding, known length): the fast path's kind of request. */
function plainPost(path: string, body: Buffer, keepAlive?: Agent): Promise<Answer> {
  const url = new URL(path, server.httpUrl);
  return new Promise((done, fail) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent: keepAlive,
        headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

const inferBody = (value: number) => Buffer.from(JSON.stringify({ inputs: [{ name: 'IN', datatype: 'INT32', shape: [1, 1], data: [value] }] }));
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a full queue is refused before the body is decoded; the refusal is counted; the connection is reused', async () => {
  const busy = plainPost('/v2/models/batch_echo/infer', inferBody(0));
  await pause(50);
  const queued = [1, 2].map((v) => plainPost('/v2/models/batch_echo/infer', inferBody(v)));
  await pause(50);
  // Garbage JSON: decoding it would answer 400; the full queue answers first.
  const refused = await plainPost('/v2/models/batch_echo/infer', Buffer.from('{"inputs": [ not json'), agent);
  assert.equal(refused.status, 503);
  assert.match((JSON.parse(refused.body) as { error: string }).error, /^Exceeds maximum queue size for model 'batch_echo'$/);
  const again = await plainPost('/v2/models/batch_echo/infer', inferBody(9), agent);
  assert.equal(again.status, 503, 'the same keep-alive connection answers the next request');

  assert.deepEqual(
    (await Promise.all([busy, ...queued])).map((a) => a.status),
    [200, 200, 200],
  );
  // With room in the queue the body is decoded again: garbage is a 400.
  const bad = await plainPost('/v2/models/batch_echo/infer', Buffer.from('{"inputs": [ not json'), agent);
  assert.equal(bad.status, 400);
  agent.destroy();

  const stats = (await request(`${server.httpUrl}/v2/models/batch_echo/stats`)).json() as { model_stats: { inference_stats: Record<string, { count: number }> }[] };
  assert.equal(stats.model_stats[0]?.inference_stats['success']?.count, 3);
  assert.equal(stats.model_stats[0]?.inference_stats['fail']?.count, 2);
});
