// The example repository copied out of Herd's tree still serves: its js model (token_counter) takes its
// tokenizer from `args.herd`, so nothing in it resolves a package through Herd's node_modules.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { HerdServer } from '../../src/app.ts';
import { EXAMPLE_REPOSITORY, postJson, startTestServer } from './start-test-server.ts';

let server: HerdServer;
let copy: string;

before(async () => {
  copy = mkdtempSync(join(tmpdir(), 'herd-examples-copy-'));
  // The copy must be where no parent folder has a node_modules that holds gpt-tokenizer.
  assert.ok(relative(process.cwd(), copy).startsWith('..'), `${copy} is inside the checkout`);
  for (let dir = copy; dir !== join(dir, '..'); dir = join(dir, '..')) {
    assert.ok(!existsSync(join(dir, 'node_modules', 'gpt-tokenizer')), `${dir}/node_modules has gpt-tokenizer`);
  }
  cpSync(EXAMPLE_REPOSITORY, copy, { recursive: true });
  server = await startTestServer({ repositories: [copy] });
});
after(async () => {
  await server?.close();
  if (copy) rmSync(copy, { recursive: true, force: true });
});

test('the example js model imports no package', () => {
  const source = readFileSync(join(copy, 'token_counter', '1', 'model.mjs'), 'utf8');
  assert.doesNotMatch(source, /^\s*import\s/m);
  assert.doesNotMatch(source, /\bimport\(|\brequire\(/);
});

test('every example model loads from the copy, and token_counter counts', async () => {
  const summary = server.repository.summary();
  assert.deepEqual(
    summary.filter((m) => m.state !== 'READY').map((m) => `${m.name}: ${m.reason}`),
    [],
  );
  assert.ok(summary.some((m) => m.name === 'token_counter'));
  const texts = ['Hello, world!', 'Triton Inference Server 部署多模型推理实战', 'spells <|endoftext|> as text'];
  const res = await postJson(`${server.httpUrl}/v2/models/token_counter/infer`, {
    inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [texts.length, 1], data: texts }],
  });
  assert.equal(res.status, 200, res.body.toString());
  const output = (res.json() as { outputs: { name: string; data: number[] }[] }).outputs[0];
  assert.equal(output?.name, 'token_count');
  assert.deepEqual(
    output?.data,
    texts.map((t) => countTokens(t, { disallowedSpecial: new Set() })),
  );
});
