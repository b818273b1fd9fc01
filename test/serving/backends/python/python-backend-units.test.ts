// The python backend's pure pieces: the wire framing (frames split and joined across pipe chunks), the
// backend-config settings, the interpreter choice, `herd serve --backend-config` parsing, and the
// message when the interpreter has no numpy.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { createBackends } from '../../../../src/app.ts';
import { resolveServeConfig } from '../../../../src/cli/serve-command.ts';
import { parsePythonBackendSettings, resolvePythonExecutable } from '../../../../src/serving/backends/python/python-backend-options.ts';
import { decodeStubTensors, encodeStubTensors } from '../../../../src/serving/backends/python/convert-stub-tensors.ts';
import { encodeStubFrame, StubFrameReader } from '../../../../src/serving/backends/python/stub-wire.ts';
import { ModelRepositoryManager } from '../../../../src/serving/repository/model-repository-manager.ts';
import { parsePbtxtModelConfig } from '../../../../src/serving/model-config/parse-model-config.ts';

describe('stub wire', () => {
  it('reassembles frames whatever the chunking, with the body bytes intact', () => {
    const tensors = encodeStubTensors([
      { name: 'A', datatype: 'FP32', shape: [2], data: Float32Array.from([1.5, -2]) },
      { name: 'S', datatype: 'BYTES', shape: [2], data: [Buffer.from('hé'), Buffer.from('')] },
    ]);
    const frame = Buffer.concat([...encodeStubFrame({ type: 'x', tensors: tensors.descriptors }, tensors.parts), ...encodeStubFrame({ type: 'y' })]);
    for (const size of [1, 3, 7, frame.length]) {
      const reader = new StubFrameReader();
      const frames = [];
      for (let i = 0; i < frame.length; i += size) frames.push(...reader.push(frame.subarray(i, i + size)));
      assert.deepEqual(
        frames.map((f) => f.header.type),
        ['x', 'y'],
        `chunks of ${size}`,
      );
      const decoded = decodeStubTensors(frames[0]?.header['tensors'], frames[0]?.body as Buffer, 'test');
      assert.deepEqual([...((decoded[0]?.data as Float32Array | undefined) ?? [])], [1.5, -2]);
      assert.deepEqual(
        ((decoded[1]?.data as Uint8Array[] | undefined) ?? []).map((b) => Buffer.from(b).toString()),
        ['hé', ''],
      );
    }
  });

  it('refuses a tensor descriptor pointing outside the body', () => {
    assert.throws(() => decodeStubTensors([{ name: 'A', datatype: 'FP32', shape: [4], offset: 0, size: 16 }], Buffer.alloc(8), 'stub'), /malformed tensor/);
  });
});

describe('python backend settings', () => {
  it("reads Triton's keys, warns about unknown ones, rejects bad numbers", () => {
    const warnings: string[] = [];
    const s = parsePythonBackendSettings(
      { 'python-executable': '/opt/py/bin/python3', 'shm-default-byte-size': '16777216', 'stub-timeout-seconds': '5', 'shm-region-prefix-name': 'p', bogus: '1' },
      (w) => warnings.push(w),
    );
    assert.equal(s.executable, '/opt/py/bin/python3');
    assert.equal(s.shmDefaultByteSize, 16777216);
    assert.equal(s.stubTimeoutSeconds, 5);
    assert.deepEqual(warnings, ["backend config python,bogus: unknown to Herd's python backend, ignored"]);
    assert.throws(() => parsePythonBackendSettings({ 'shm-growth-byte-size': 'lots' }, () => undefined), /shm-growth-byte-size must be a positive integer, got 'lots'/);
    assert.equal(parsePythonBackendSettings({ 'stub-poll-microseconds': '300' }, () => undefined).stubPollMicroseconds, 300);
    assert.equal(parsePythonBackendSettings({ 'stub-poll-microseconds': '0' }, () => undefined).stubPollMicroseconds, 0);
    assert.throws(() => parsePythonBackendSettings({ 'stub-poll-microseconds': '-1' }, () => undefined), /stub-poll-microseconds must be a positive integer/);
  });

  it("EXECUTION_ENV_PATH picks the model's own interpreter; a packed environment is refused with what to do", () => {
    const modelPath = mkdtempSync(join(tmpdir(), 'herd-pyenv-'));
    mkdirSync(join(modelPath, 'env/bin'), { recursive: true });
    writeFileSync(join(modelPath, 'env/bin/python3'), '');
    const settings = parsePythonBackendSettings({}, () => undefined);
    const config = (env: string) =>
      parsePbtxtModelConfig(`name: "m"\nbackend: "python"\nparameters: { key: "EXECUTION_ENV_PATH", value: { string_value: "${env}" } }`, 'config.pbtxt', 'm', {
        validateIO: false,
      });
    assert.equal(resolvePythonExecutable(config('$$TRITON_MODEL_DIRECTORY/env'), modelPath, settings), join(modelPath, 'env/bin/python3'));
    assert.throws(() => resolvePythonExecutable(config('$$TRITON_MODEL_DIRECTORY/env.tar.gz'), modelPath, settings), /packed environment; unpack it/);
    assert.equal(resolvePythonExecutable(parsePbtxtModelConfig('name: "m"\nbackend: "python"', 'c', 'm', { validateIO: false }), modelPath, settings), 'python3');
  });

  it('herd serve --backend-config=python,key=value lands in serving.backend_config', () => {
    const config = resolveServeConfig({ modelRepository: ['/tmp'], backendConfig: ['python,python-executable=/usr/bin/python3', 'python,shm-default-byte-size=1048576'] });
    assert.deepEqual(config.serving.backend_config, { python: { 'python-executable': '/usr/bin/python3', 'shm-default-byte-size': '1048576' } });
    assert.throws(() => resolveServeConfig({ modelRepository: ['/tmp'], backendConfig: ['python-executable=/x'] }), /--backend-config must be <backend>,<setting>=<value>/);
  });
});

describe('an interpreter without numpy', () => {
  it('leaves the model UNAVAILABLE with a reason that names numpy and the interpreter', async (t) => {
    if (!existsSync('/usr/bin/python3')) return t.skip('needs /usr/bin/python3');
    const dir = mkdtempSync(join(tmpdir(), 'herd-nonumpy-'));
    const wrapper = join(dir, 'python-without-site');
    // -S: no site-packages, so Debian's python3-numpy is out of reach.
    writeFileSync(wrapper, '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n');
    chmodSync(wrapper, 0o755);
    const repository = new ModelRepositoryManager({
      repositories: [resolve('test/fixtures/python_models')],
      controlMode: 'explicit',
      backends: createBackends({ backendConfig: { python: { 'python-executable': wrapper } } }),
    });
    await repository.start(['error_response']);
    const entry = repository.summary().find((m) => m.name === 'error_response');
    await repository.close();
    assert.equal(entry?.state, 'UNAVAILABLE');
    assert.match(entry?.reason ?? '', /python backend needs numpy, and the interpreter \/usr\/bin\/python3 \('.*python-without-site'\) has none/);
  });
});
