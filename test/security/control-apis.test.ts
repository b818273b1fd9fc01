// Triton's API groups as the unit of access: with a master key set, model-repository, shared-memory, trace
// and logging need it (HTTP and gRPC) while health, metadata, inference and the rest stay open; herd.yaml
// opens or restricts any group; tritonserver's --http-restricted-api / --grpc-restricted-protocol work with
// Triton's header, status and words.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status as Status } from '@grpc/grpc-js';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { resolveApiGroupRules } from '../../src/core/api-groups.ts';
import { TestKeys } from '../helpers/test-keys.ts';
import { postJson, request, TRITON_REPOSITORY } from '../e2e/start-test-server.ts';

const MASTER = 'sk-herd-control-master-0123456789abcdef';

async function startControlHerd(server: string, env: Record<string, string>, withGateway = false): Promise<{ herd: HerdServer; keysPath: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-control-'));
  const keysPath = join(dir, 'keys.db');
  const gateway = withGateway
    ? `
providers:
  relay: { type: openai, base_url: "http://127.0.0.1:9/v1", api_key_env: FAKE_RELAY_KEY }
models:
  m: { price: { input: 1, output: 1 }, deployments: [{ provider: relay }] }
billing: { ledger: off }
`
    : '';
  const config = parseHerdConfig(
    `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0${server} }
serving: { model_repository: [${JSON.stringify(TRITON_REPOSITORY)}], model_control_mode: explicit, load_model: [simple] }
auth: { db: "${keysPath}" }
${gateway}`,
    join(dir, 'herd.yaml'),
  );
  return { herd: await startHerd(config, { env: { FAKE_RELAY_KEY: 'x', ...env } }), keysPath };
}

const simpleInputs = {
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
  ],
};

/** The control routes of each restricted-by-default group, as a client calls them. */
function controlCalls(url: string, headers: Record<string, string>): [string, () => Promise<{ status: number; body: Buffer }>][] {
  return [
    ['repository index', () => postJson(`${url}/v2/repository/index`, {}, headers)],
    ['load', () => postJson(`${url}/v2/repository/models/simple/load`, {}, headers)],
    ['unload', () => postJson(`${url}/v2/repository/models/simple_identity/unload`, {}, headers)],
    ['trace get', () => request(`${url}/v2/trace/setting`, { headers })],
    ['trace set', () => postJson(`${url}/v2/trace/setting`, { trace_rate: '10' }, headers)],
    ['model trace', () => postJson(`${url}/v2/models/simple/trace/setting`, { trace_rate: '10' }, headers)],
    ['logging', () => postJson(`${url}/v2/logging`, { log_verbose_level: 0 }, headers)],
    ['shm register', () => postJson(`${url}/v2/systemsharedmemory/region/r0/register`, { key: '/herd-control-test-none', offset: 0, byte_size: 64 }, headers)],
    ['shm status', () => request(`${url}/v2/systemsharedmemory/status`, { headers })],
  ];
}

describe('master key set: the control groups need it by default', () => {
  let herd: HerdServer;
  let clientKey: string;
  before(async () => {
    const started = await startControlHerd('', { HERD_MASTER_KEY: MASTER }, true);
    herd = started.herd;
    const store = await TestKeys.open(started.keysPath);
    clientKey = (await store.create({ name: 'client', allowedModels: '*' })).secret;
    await store.close();
  });
  after(async () => {
    await herd?.close();
  });

  it('HTTP: refused without a key (401) and with a client key (403), in the KServe shape', async () => {
    for (const [label, call] of controlCalls(herd.httpUrl, {})) {
      const answer = await call();
      assert.equal(answer.status, 401, `${label}: ${answer.body.toString()}`);
      assert.match(JSON.parse(answer.body.toString()).error, /needs the master key: send 'Authorization: Bearer <master key>'/, label);
    }
    for (const [label, call] of controlCalls(herd.httpUrl, { authorization: `Bearer ${clientKey}` })) {
      const answer = await call();
      assert.equal(answer.status, 403, `${label}: ${answer.body.toString()}`);
    }
  });

  it('HTTP: the master key (Bearer or x-api-key) is let through to the handler', async () => {
    const masterHeaders: Record<string, string>[] = [{ authorization: `Bearer ${MASTER}` }, { 'x-api-key': MASTER }];
    for (const headers of masterHeaders) {
      for (const [label, call] of controlCalls(herd.httpUrl, headers)) {
        const answer = await call();
        assert.ok(answer.status !== 401 && answer.status !== 403, `${label}: ${answer.status} ${answer.body.toString()}`);
      }
    }
    const index = await postJson(`${herd.httpUrl}/v2/repository/index`, {}, { authorization: `Bearer ${MASTER}` });
    assert.equal(index.status, 200);
  });

  it('HTTP: health, metadata, model config, statistics and inference stay open', async () => {
    for (const path of ['/v2/health/live', '/v2/health/ready', '/v2', '/v2/models/simple', '/v2/models/simple/ready', '/v2/models/simple/config', '/v2/models/stats']) {
      const answer = await request(`${herd.httpUrl}${path}`);
      assert.equal(answer.status, 200, `${path}: ${answer.body.toString()}`);
    }
    assert.equal((await postJson(`${herd.httpUrl}/v2/models/simple/infer`, simpleInputs)).status, 200);
  });

  it('gRPC: the same groups are UNAUTHENTICATED without a key, PERMISSION_DENIED with a client key, and served with the master key', async () => {
    const rpcs: [string, Record<string, unknown>][] = [
      ['RepositoryIndex', {}],
      ['RepositoryModelLoad', { model_name: 'simple' }],
      ['RepositoryModelUnload', { model_name: 'simple_identity' }],
      ['TraceSetting', {}],
      ['LogSettings', {}],
      ['SystemSharedMemoryStatus', {}],
      ['SystemSharedMemoryRegister', { name: 'r0', key: '/herd-control-test-none', offset: 0, byte_size: 64 }],
    ];
    const client = new KserveGrpcClient({ url: herd.grpcUrl as string });
    try {
      for (const [method, message] of rpcs) {
        await assert.rejects(client.rpc(method, message), (err: { grpcCode: number }) => err.grpcCode === Status.UNAUTHENTICATED, method);
        await assert.rejects(
          client.rpc(method, message, { authorization: `Bearer ${clientKey}` }),
          (err: { grpcCode: number }) => err.grpcCode === Status.PERMISSION_DENIED,
          method,
        );
        await client.rpc(method, message, { 'x-api-key': MASTER }).catch((err: { grpcCode: number; message: string }) => {
          assert.ok(err.grpcCode !== Status.UNAUTHENTICATED && err.grpcCode !== Status.PERMISSION_DENIED, `${method}: ${err.message}`);
        });
      }
      assert.equal(await client.serverLive(), true);
      assert.equal(await client.modelReady('simple'), true);
      assert.equal((await client.modelMetadata('simple')).name, 'simple');
    } finally {
      client.close();
    }
  });
});

describe('herd.yaml server.restricted_api: any group opened or restricted', () => {
  let herd: HerdServer;
  before(async () => {
    ({ herd } = await startControlHerd(', restricted_api: { model-repository: open, statistics: master, model-config: "x-team=blue" }', { HERD_MASTER_KEY: MASTER }));
  });
  after(async () => {
    await herd?.close();
  });

  it('opens model-repository, puts statistics behind the master key and model-config behind a header', async () => {
    assert.equal((await postJson(`${herd.httpUrl}/v2/repository/index`, {})).status, 200);
    assert.equal((await request(`${herd.httpUrl}/v2/models/stats`)).status, 401);
    assert.equal((await request(`${herd.httpUrl}/v2/models/stats`, { headers: { authorization: `Bearer ${MASTER}` } })).status, 200);
    const config = await request(`${herd.httpUrl}/v2/models/simple/config`);
    assert.equal(config.status, 403);
    assert.deepEqual(JSON.parse(config.body.toString()), { error: "This API is restricted, expecting header 'x-team'" });
    assert.equal((await request(`${herd.httpUrl}/v2/models/simple/config`, { headers: { 'x-team': 'blue' } })).status, 200);
    // Still master by default: logging.
    assert.equal((await postJson(`${herd.httpUrl}/v2/logging`, {})).status, 401);
    const client = new KserveGrpcClient({ url: herd.grpcUrl as string });
    try {
      await assert.rejects(client.modelConfig('simple'), (err: { grpcCode: number; message: string }) => {
        assert.equal(err.grpcCode, Status.UNAVAILABLE);
        assert.equal(err.message, "This protocol is restricted, expecting header 'triton-grpc-protocol-x-team'");
        return true;
      });
      assert.equal(
        Number((await client.rpc<{ config: Record<string, unknown> }>('ModelConfig', { name: 'simple' }, { 'triton-grpc-protocol-x-team': 'blue' })).config['max_batch_size']),
        8,
      );
    } finally {
      client.close();
    }
  });
});

describe("tritonserver's --http-restricted-api and --grpc-restricted-protocol (no master key)", () => {
  let herd: HerdServer;
  before(async () => {
    ({ herd } = await startControlHerd(
      ', http_restricted_api: ["model-repository,inference:admin-key=s3cret"], grpc_restricted_protocol: ["model-repository,inference:admin-key=s3cret"]',
      {},
    ));
  });
  after(async () => {
    await herd?.close();
  });

  it("HTTP: 403 with Triton's words without the header, served with it; inference too (the fast path steps aside)", async () => {
    const index = await postJson(`${herd.httpUrl}/v2/repository/index`, {});
    assert.equal(index.status, 403);
    assert.deepEqual(JSON.parse(index.body.toString()), { error: "This API is restricted, expecting header 'admin-key'" });
    assert.equal((await postJson(`${herd.httpUrl}/v2/repository/index`, {}, { 'admin-key': 'wrong' })).status, 403);
    assert.equal((await postJson(`${herd.httpUrl}/v2/repository/index`, {}, { 'admin-key': 's3cret' })).status, 200);
    assert.equal((await postJson(`${herd.httpUrl}/v2/models/simple/infer`, simpleInputs)).status, 403);
    assert.equal((await postJson(`${herd.httpUrl}/v2/models/simple/infer`, simpleInputs, { 'admin-key': 's3cret' })).status, 200);
    // Groups not named stay open.
    assert.equal((await postJson(`${herd.httpUrl}/v2/logging`, {})).status, 200);
  });

  it("gRPC: UNAVAILABLE with Triton's words without triton-grpc-protocol-<key>, served with it (ModelInfer and ModelStreamInfer)", async () => {
    const client = new KserveGrpcClient({ url: herd.grpcUrl as string });
    try {
      await assert.rejects(client.repositoryIndex(), (err: { grpcCode: number; message: string }) => {
        assert.equal(err.grpcCode, Status.UNAVAILABLE);
        assert.equal(err.message, "This protocol is restricted, expecting header 'triton-grpc-protocol-admin-key'");
        return true;
      });
      await client.rpc('RepositoryIndex', {}, { 'triton-grpc-protocol-admin-key': 's3cret' });
      const stream = client.streamInfer();
      stream.end();
      await assert.rejects(
        (async () => {
          for await (const _ of stream.responses);
        })(),
        (err: { grpcCode?: number; message: string }) => /This protocol is restricted/.test(err.message),
      );
    } finally {
      client.close();
    }
  });

  it("bad flag values are refused with Triton's parser's words", () => {
    const settings = { configured: {}, transport: 'http' as const, masterKeySet: false };
    assert.throws(() => resolveApiGroupRules({ ...settings, flags: ['metrics:k=v'] }), /unknown restricted api 'metrics'/);
    assert.throws(() => resolveApiGroupRules({ ...settings, flags: ['trace:k=v', 'trace,logging:k2=v'] }), /restricted api 'trace' can not be specified in multiple config groups/);
    assert.throws(() => resolveApiGroupRules({ ...settings, flags: ['trace'] }), /expects <groups>:<key>=<value>/);
    assert.throws(() => resolveApiGroupRules({ ...settings, flags: [], configured: { trace: 'nobody' } }), /must be master, open or <header>=<value>/);
  });
});
