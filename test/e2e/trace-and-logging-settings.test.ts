// Triton's trace and logging extensions over HTTP and gRPC against one server: a setting made over one
// transport is answered over the other (one store on the serving side), with Triton's errors on both.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { status as Status } from '@grpc/grpc-js';
import type { HerdServer } from '../../src/app.ts';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { startTestServer, TRITON_REPOSITORY } from './start-test-server.ts';

let server: HerdServer;
let grpc: KserveGrpcClient;
// Triton mode traces only with a trace file (and refuses to turn tracing on without one).
const dir = mkdtempSync(join(tmpdir(), 'herd-trace-settings-'));
const traceFile = join(dir, 'trace.json');

before(async () => {
  server = await startTestServer({ repositories: [TRITON_REPOSITORY], controlMode: 'explicit', loadModel: ['simple'], trace: { triton: { file: traceFile } } });
  grpc = new KserveGrpcClient({ url: server.grpcUrl as string });
});
after(async () => {
  grpc?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function http(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  const response = await fetch(`${server.httpUrl}${path}`, init);
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

type TraceAnswer = { settings: Record<string, { value: string[] }> };
const grpcTrace = async (request: Record<string, unknown>) => {
  const answer = await grpc.rpc<TraceAnswer>('TraceSetting', request);
  return Object.fromEntries(Object.entries(answer.settings).map(([k, v]) => [k, k === 'trace_level' ? v.value : (v.value[0] ?? '')]));
};

async function rejectsWith(promise: Promise<unknown>, code: number, message: string): Promise<void> {
  await assert.rejects(promise, (err: { grpcCode: number; message: string }) => {
    assert.deepEqual([err.grpcCode, err.message], [code, message]);
    return true;
  });
}

test('trace settings: the defaults, an update over HTTP answered over gRPC and back, model overrides', async () => {
  const initial = await http('GET', '/v2/trace/setting');
  assert.equal(initial.status, 200);
  assert.deepEqual(initial.json, { trace_level: ['OFF'], trace_rate: '1000', trace_count: '-1', log_frequency: '0', trace_file: traceFile, trace_mode: 'triton' });
  assert.deepEqual(Object.keys(initial.json), ['trace_level', 'trace_rate', 'trace_count', 'log_frequency', 'trace_file', 'trace_mode'], "Triton's key order");

  const updated = await http('POST', '/v2/trace/setting', { trace_level: ['TENSORS', 'TIMESTAMPS', 'NOT_A_LEVEL'], trace_rate: '50', unknown_key: 'ignored' });
  assert.equal(updated.status, 200);
  assert.deepEqual([updated.json['trace_level'], updated.json['trace_rate']], [['TIMESTAMPS', 'TENSORS'], '50']);
  assert.deepEqual(await grpcTrace({}), updated.json, 'gRPC answers what HTTP set');

  await grpcTrace({ model_name: 'simple', settings: { trace_count: { value: ['7'] } } });
  const model = await http('GET', '/v2/models/simple/trace/setting');
  assert.deepEqual([model.json['trace_count'], model.json['trace_rate']], ['7', '50'], 'the override over the global setting');
  assert.equal((await http('GET', '/v2/trace/setting')).json['trace_count'], '-1', 'the global setting is unchanged');
  const cleared = await http('POST', '/v2/models/simple/trace/setting', { trace_count: null });
  assert.equal(cleared.json['trace_count'], '-1', 'null clears the override');
  assert.deepEqual(await grpcTrace({ model_name: 'simple' }), cleared.json);

  // An empty body is an empty update; null on a global key restores its default.
  assert.deepEqual((await http('POST', '/v2/trace/setting', '')).json, updated.json);
  const reset = await http('POST', '/v2/trace/setting', { trace_level: null, trace_rate: null });
  assert.deepEqual([reset.json['trace_level'], reset.json['trace_rate']], [['OFF'], '1000']);
});

test("trace settings: Triton's errors over HTTP and gRPC", async () => {
  const cases: [unknown, number, string][] = [
    [{ trace_file: '/tmp/x' }, 501, 'trace file location can not be updated through network protocol'],
    [{ trace_level: ['OFF', 'TIMESTAMPS'] }, 400, "Expect only one trace level 'OFF' is specified"],
    [{ trace_rate: 'fast' }, 400, "Unable to parse 'trace_rate', got: fast"],
    // Triton's HTTP handler words this one without the space its gRPC handler has.
    [{ trace_count: '-2' }, 400, "Unable to parse 'trace_count'. Expecting value >= -1, got:-2"],
    [{ trace_rate: '99999999999' }, 400, "Unable to parse 'trace_rate', value is out of range [ 0, 4294967295 ], got: 99999999999"],
    [{ trace_rate: 5 }, 500, 'attempt to access JSON non-string as string'],
    [{ trace_level: 'OFF' }, 500, 'attempt to access JSON non-array as array'],
    ['{not json', 400, 'failed to parse the request JSON buffer'],
  ];
  for (const [body, status, message] of cases) {
    const answer = await http('POST', '/v2/trace/setting', body);
    assert.equal(answer.status, status, JSON.stringify(body));
    assert.ok(String(answer.json['error']).startsWith(message), `${JSON.stringify(body)}: ${String(answer.json['error'])}`);
  }
  const unknown = await http('GET', '/v2/models/no_such_model/trace/setting');
  assert.deepEqual([unknown.status, unknown.json], [400, { error: 'Request for unknown model : no_such_model' }]);
  await rejectsWith(grpc.rpc('TraceSetting', { model_name: 'no_such_model' }), Status.INVALID_ARGUMENT, 'Request for unknown model : no_such_model');
  await rejectsWith(
    grpc.rpc('TraceSetting', { settings: { trace_count: { value: ['-2'] } } }),
    Status.INVALID_ARGUMENT,
    "Unable to parse 'trace_count'. Expecting value >= -1, got: -2",
  );
  await rejectsWith(grpc.rpc('TraceSetting', { settings: { trace_rate: { value: ['1', '2'] } } }), Status.INVALID_ARGUMENT, "expect only 1 value for 'trace_rate'");
  // A refused update changes nothing.
  assert.equal((await http('GET', '/v2/trace/setting')).json['trace_rate'], '1000');
});

test('log settings: an update over gRPC answered over HTTP and back, with Triton errors on both', async () => {
  const initial = await http('GET', '/v2/logging');
  assert.deepEqual(initial.json, { log_file: '', log_info: true, log_warning: true, log_error: true, log_verbose_level: 0, log_format: 'default' });

  await grpc.rpc('LogSettings', { settings: { log_verbose_level: { uint32_param: 2 } } });
  const posted = await http('POST', '/v2/logging', { log_info: false, log_format: 'ISO8601', log_error: null, unknown_key: 1 });
  assert.equal(posted.status, 200);
  assert.deepEqual(posted.json, { log_file: '', log_info: false, log_warning: true, log_error: true, log_verbose_level: 2, log_format: 'ISO8601' });
  const overGrpc = await grpc.rpc<{ settings: Record<string, Record<string, unknown>> }>('LogSettings', {});
  assert.deepEqual(
    [overGrpc.settings['log_info']?.['bool_param'], overGrpc.settings['log_format']?.['string_param'], overGrpc.settings['log_verbose_level']?.['uint32_param']],
    [false, 'ISO8601', 2],
  );

  const cases: [unknown, number, string][] = [
    [{ log_file: 'x.log' }, 501, 'log file location can not be updated through network protocol'],
    [{ log_info: 'yes' }, 500, 'attempt to access JSON non-boolean as boolean'],
    [{ log_verbose_level: -1 }, 500, 'attempt to access JSON non-unsigned-integer as unsigned-integer'],
    [{ log_format: 'xml' }, 503, 'invalid argument for --log_format, got: xml'],
  ];
  for (const [body, status, message] of cases) {
    const answer = await http('POST', '/v2/logging', body);
    assert.deepEqual([answer.status, answer.json], [status, { error: message }], JSON.stringify(body));
  }
  await rejectsWith(grpc.rpc('LogSettings', { settings: { log_format: { string_param: 'xml' } } }), Status.INVALID_ARGUMENT, 'invalid argument for log_format, got: xml');
  await rejectsWith(grpc.rpc('LogSettings', { settings: { log_verbose_level: { bool_param: true } } }), Status.INVALID_ARGUMENT, "expect int32 for 'log_verbose_level'");
  const response = await fetch(`${server.httpUrl}/v2/logging`, { method: 'DELETE' });
  assert.equal(response.status, 405);
});
