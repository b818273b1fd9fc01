// `npm start` runs the compiled tree (dist/), not the TypeScript sources the other tests import: build
// it, start it on the example repository with a gateway in front of a local upstream, and check that
// an ONNX model (its worker thread's entry included) and a chat completion both answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { startMockUpstream } from '../gateway/helpers/mock-upstream.ts';

test('the compiled build serves models and the gateway', { timeout: 120_000 }, async () => {
  const build = spawnSync('npm', ['run', '--silent', 'build'], { encoding: 'utf8' });
  assert.equal(build.status, 0, `npm run build failed:\n${build.stdout}\n${build.stderr}`);

  const upstream = await startMockUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(openAICompletion('gpt-4.1', 'Bonjour from dist')));
  });
  const dir = mkdtempSync(join(tmpdir(), 'herd-dist-'));
  writeFileSync(
    join(dir, 'herd.yaml'),
    `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
serving: { model_repository: ["${resolve('examples/model_repository')}"], model_control_mode: explicit, load_model: [add_sub, my_model] }
auth: { db: ./herd.db }
billing: { ledger: "sqlite:./herd.db" }
providers:
  relay: { type: openai, base_url: "${upstream.url}/v1", api_key_env: DIST_TEST_UPSTREAM_KEY }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay }]
`,
  );
  const child = spawn(process.execPath, [resolve('dist/cli/herd.js'), 'serve', '--config', join(dir, 'herd.yaml')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DIST_TEST_UPSTREAM_KEY: 'sk-dist' },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  try {
    const url = await new Promise<string>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`no start-up line:\n${out}`)), 60_000);
      child.stdout.on('data', () => {
        const m = /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/.exec(out);
        if (m) {
          clearTimeout(timer);
          ok(m[1] as string);
        }
      });
      child.on('exit', (code) => fail(new Error(`exited ${code}:\n${out}`)));
    });
    const infer = await fetch(`${url}/v2/models/add_sub/infer`, {
      method: 'POST',
      body: JSON.stringify({
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
        ],
      }),
    });
    assert.equal(infer.status, 200, await infer.clone().text());
    const outputs = ((await infer.json()) as { outputs: { name: string; data: number[] }[] }).outputs;
    assert.deepEqual(
      outputs.find((o) => o.name === 'OUTPUT0')?.data,
      Array.from({ length: 16 }, (_, i) => i + 1),
    );
    const my = await fetch(`${url}/v2/models/my_model/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: Array.from({ length: 768 }, () => 0.5) }] }),
    });
    assert.equal(my.status, 200, await my.clone().text());

    const chat = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hello' }] }),
    });
    assert.equal(chat.status, 200, await chat.clone().text());
    assert.equal(((await chat.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content, 'Bonjour from dist');
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    await upstream.close();
  }
});
