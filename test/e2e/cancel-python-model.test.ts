// A Python-backend model and HTTP clients that go away (issue #32): requests queued behind the busy
// instance never reach execute(), and the running one sees request.is_cancelled() turn true. The model
// leaves marker files in its directory; the test waits on them and on the scheduler's counters.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import { PYTHON_BACKEND_CONFIG } from '../python-interpreter.ts';
import { startTestServer } from './start-test-server.ts';

const MODEL = `
import os
import time
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.dir = args["model_repository"]

    def mark(self, what, request):
        open(os.path.join(self.dir, what + "-" + request.request_id()), "w").close()

    def execute(self, requests):
        responses = []
        for request in requests:
            self.mark("running", request)
            # Waits for the client to leave (bounded: a broken cancellation fails the test, not the run).
            for _ in range(6000):
                if request.is_cancelled():
                    break
                time.sleep(0.005)
            self.mark("cancelled" if request.is_cancelled() else "finished", request)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUT", np.array([1], dtype=np.int32))]))
        return responses
`;

const CONFIG = `name: "waits"
backend: "python"
max_batch_size: 0
instance_group [ { kind: KIND_CPU count: 1 } ]
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
`;

let server: HerdServer;
let modelDir: string;

before(async () => {
  const repository = mkdtempSync(join(tmpdir(), 'herd-cancel-py-'));
  modelDir = join(repository, 'waits');
  mkdirSync(join(modelDir, '1'), { recursive: true });
  writeFileSync(join(modelDir, 'config.pbtxt'), CONFIG);
  writeFileSync(join(modelDir, '1', 'model.py'), MODEL);
  server = await startTestServer({ repositories: [repository], backendConfig: PYTHON_BACKEND_CONFIG });
});
after(() => server.close());

function openInfer(id: string): () => void {
  const req = http.request(`${server.httpUrl}/v2/models/waits/infer`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } });
  req.on('error', () => undefined);
  req.end(JSON.stringify({ id, inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [1] }] }));
  return () => req.destroy();
}

async function until(what: string, ready: () => boolean): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (ready()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`never happened: ${what}`);
}

test('queued requests of leaving clients never reach the stub; the running one sees is_cancelled() turn true', async () => {
  const stats = server.repository.get('waits').stats;
  const leaveFirst = openInfer('first');
  await until('the first request runs in Python', () => existsSync(join(modelDir, 'running-first')));
  const queued = Array.from({ length: 5 }, (_, i) => openInfer(`q${i}`));
  await until('five requests queue', () => stats.pending === 5);
  for (const leave of queued) leave();
  await until('the queue empties', () => stats.pending === 0 && stats.cancelled.queued === 5);
  leaveFirst();
  await until('the model saw is_cancelled()', () => existsSync(join(modelDir, 'cancelled-first')));
  assert.equal(stats.cancelled.running, 1);
  assert.deepEqual(
    readdirSync(modelDir).filter((f) => f.startsWith('running-')),
    ['running-first'],
    'no queued request reached execute()',
  );
});
