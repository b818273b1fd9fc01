// Strict readiness over the repository: a model the start loaded (--load-model) and then unloaded through the
// API makes the server not ready; one loaded and unloaded through the API alone does not (Triton's rule); a
// failed load does. A reload serves the old version until the new one is loaded, with readiness unbroken.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend, BackendFactory } from '../../src/serving/backends/backend.ts';
import { ModelRepositoryManager } from '../../src/serving/repository/model-repository-manager.ts';

/** A backend whose loads wait while `gate` is set, and whose answers say which load made them. */
function gatedBackend() {
  let loads = 0;
  const state: { gate: Promise<void> | undefined; executing: Promise<void> | undefined } = { gate: undefined, executing: undefined };
  const factory: BackendFactory = {
    name: 'gated',
    async load(): Promise<Backend> {
      const generation = ++loads;
      await state.gate;
      return {
        execute: async (requests) => {
          await state.executing;
          return requests.map(() => ({ ok: true as const, outputs: [], parameters: { generation } }));
        },
        unload: async () => undefined,
      };
    },
  };
  return { factory, state };
}

function repositoryWith(names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'herd-readiness-'));
  for (const name of names) {
    mkdirSync(join(dir, name, '1'), { recursive: true });
    writeFileSync(
      join(dir, name, 'config.pbtxt'),
      `name: "${name}"\nbackend: "gated"\nmax_batch_size: 0\ninput [{ name: "IN", data_type: TYPE_INT32, dims: [1] }]\noutput [{ name: "OUT", data_type: TYPE_INT32, dims: [1] }]\n`,
    );
  }
  return dir;
}

function explicitManager(repository: string, factory: BackendFactory): ModelRepositoryManager {
  return new ModelRepositoryManager({ repositories: [repository], controlMode: 'explicit', backends: new Map([[factory.name, factory]]) });
}

test('explicit mode: unloading a --load-model model makes the server not ready until it is loaded again', async (t) => {
  const { factory } = gatedBackend();
  const manager = explicitManager(repositoryWith(['declared', 'extra']), factory);
  t.after(() => manager.close());
  await manager.start(['declared']);
  assert.equal(manager.allReady(), true);

  // Loaded and unloaded through the API alone: Triton's rule, an unloaded model does not count.
  await manager.load('extra');
  await manager.unload('extra');
  assert.equal(manager.allReady(), true);

  await manager.unload('declared');
  assert.equal(manager.allReady(), false, 'the deployment declared it: a replica without it is not ready');
  await manager.load('declared');
  assert.equal(manager.allReady(), true);
});

test("explicit mode with '*': every model of the start counts", async (t) => {
  const { factory } = gatedBackend();
  const manager = explicitManager(repositoryWith(['a', 'b']), factory);
  t.after(() => manager.close());
  await manager.start(['*']);
  await manager.unload('b');
  assert.equal(manager.allReady(), false);
});

test('a failed load makes the server not ready', async (t) => {
  const { factory } = gatedBackend();
  const repository = repositoryWith(['ok']);
  mkdirSync(join(repository, 'broken', '1'), { recursive: true });
  writeFileSync(join(repository, 'broken', 'config.pbtxt'), 'name: "broken"\nbackend: "nonexistent"\n');
  const manager = explicitManager(repository, factory);
  t.after(() => manager.close());
  await manager.start(['ok']);
  await assert.rejects(manager.load('broken'));
  assert.equal(manager.allReady(), false);
});

test('a reload serves the old version until the new one is loaded; readiness stays true throughout', async (t) => {
  const backend = gatedBackend();
  const manager = explicitManager(repositoryWith(['m']), backend.factory);
  t.after(() => manager.close());
  await manager.start(['m']);
  const old = manager.get('m');

  let open!: () => void;
  backend.state.gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const reload = manager.load('m');
  // The new load waits on the gate: requests meanwhile go to the old version, and the server stays ready.
  await new Promise((r) => setImmediate(r));
  assert.equal(manager.get('m'), old);
  assert.equal(manager.allReady(), true);
  // A request still running on the old version when the new one is ready: the new one serves at once
  // (no UNLOADING gap while the old one finishes), and the old request is answered.
  let finishOld!: () => void;
  backend.state.executing = new Promise<void>((resolve) => {
    finishOld = resolve;
  });
  const running = old.scheduler.submit({ id: '', modelName: 'm', modelVersion: 1, inputs: [], requestedOutputs: [], parameters: {} });
  open();
  let reloaded = false;
  void reload.then(() => {
    reloaded = true;
  });
  while (manager.get('m') === old) await new Promise((r) => setImmediate(r));
  assert.equal(manager.allReady(), true);
  assert.equal(reloaded, false, 'the reload waits for the old version to finish its request');
  backend.state.executing = undefined;
  finishOld();
  assert.deepEqual((await running).ok, true);
  await reload;
});
