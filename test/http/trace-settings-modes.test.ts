// GET/POST /v2/trace/setting and /v2/models/{m}/trace/setting on a real server in each mode, started from
// serving.trace as --trace-config sets it: OpenTelemetry mode's answer (no trace_file or log_frequency, its settings as
// strings, one `resource` member per attribute), Triton mode's, and Triton's refusals in words and statuses.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { HerdServer } from '../../src/app.ts';
import { startTestServer, TRITON_REPOSITORY } from '../e2e/start-test-server.ts';

let otel: HerdServer;
let triton: HerdServer;
const dir = mkdtempSync(join(tmpdir(), 'herd-trace-modes-'));
const traceFile = join(dir, 'trace.json');

before(async () => {
  const base = { repositories: [TRITON_REPOSITORY], controlMode: 'explicit' as const, loadModel: ['simple'] };
  otel = await startTestServer({
    ...base,
    trace: {
      mode: 'opentelemetry',
      level: ['TIMESTAMPS'],
      rate: 1,
      count: -1,
      opentelemetry: { url: 'localhost:4318/v1/traces', resource: { 'test.key': 'test.value', 'service.name': 'test_triton' } },
    },
  });
  triton = await startTestServer({ ...base, trace: { level: ['TIMESTAMPS'], rate: 6, triton: { file: traceFile, log_frequency: 2, other: { foo: 'bar' } } } });
});
after(async () => {
  await otel?.close();
  await triton?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(server: HerdServer, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; text: string; json: Record<string, unknown> }> {
  const init: RequestInit = { method };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(`${server.httpUrl}${path}`, init);
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

test('OpenTelemetry mode: the answer as Triton writes it, byte for byte', async () => {
  const answer = await call(otel, 'GET', '/v2/trace/setting');
  assert.equal(answer.status, 200);
  assert.equal(
    answer.text,
    '{"trace_level":["TIMESTAMPS"],"trace_rate":"1","trace_count":"-1","trace_mode":"opentelemetry","url":"localhost:4318/v1/traces",' +
      '"resource":"test.key=test.value","resource":"service.name=test_triton",' +
      '"bsp_max_queue_size":"2048","bsp_schedule_delay":"5000","bsp_max_export_batch_size":"512"}',
  );
  assert.equal('trace_file' in answer.json, false);
  assert.equal('log_frequency' in answer.json, false);
});

test('OpenTelemetry mode: updates per model and globally; log_frequency is accepted and never answered', async () => {
  const model = await call(otel, 'POST', '/v2/models/simple/trace/setting', { trace_rate: '5', log_frequency: '3' });
  assert.deepEqual([model.status, model.json['trace_rate'], model.json['trace_mode'], model.json['log_frequency']], [200, '5', 'opentelemetry', undefined]);
  const global = await call(otel, 'POST', '/v2/trace/setting', { trace_count: '10', trace_level: [] });
  assert.deepEqual(
    [global.json['trace_count'], global.json['trace_level'], global.json['trace_rate']],
    ['10', ['TIMESTAMPS'], '1'],
    'an empty level list changes nothing over HTTP',
  );
  const again = await call(otel, 'GET', '/v2/models/simple/trace/setting');
  assert.deepEqual([again.json['trace_rate'], again.json['trace_count']], ['5', '10'], 'the model mirrors the global count');
  const refused = await call(otel, 'POST', '/v2/trace/setting', { trace_rate: '0' });
  assert.deepEqual([refused.status, refused.json], [400, { error: 'Attempting to set invalid trace setting :sample rate must be non-zero' }]);
  const off = await call(otel, 'POST', '/v2/trace/setting', { trace_rate: '0', trace_level: ['OFF'] });
  assert.deepEqual([off.status, off.json['trace_rate'], off.json['trace_level']], [200, '0', ['OFF']], 'an invalid setting is allowed when it turns tracing off');
});

test('Triton mode: file and log frequency answered, unused settings echoed, tracing refused and allowed as Triton does', async () => {
  const answer = await call(triton, 'GET', '/v2/models/simple/trace/setting');
  assert.deepEqual(answer.json, {
    trace_level: ['TIMESTAMPS'],
    trace_rate: '6',
    trace_count: '-1',
    log_frequency: '2',
    trace_file: traceFile,
    trace_mode: 'triton',
    foo: 'bar',
  });
  const refused = await call(triton, 'POST', '/v2/trace/setting', { trace_file: 'other.json' });
  assert.deepEqual([refused.status, refused.json], [501, { error: 'trace file location can not be updated through network protocol' }]);
  const cleared = await call(triton, 'POST', '/v2/models/simple/trace/setting', { trace_level: null, trace_rate: '1' });
  assert.deepEqual([cleared.json['trace_level'], cleared.json['trace_rate']], [['TIMESTAMPS'], '1']);
  const count = await call(triton, 'POST', '/v2/trace/setting', { trace_count: '-2' });
  assert.deepEqual([count.status, count.json], [400, { error: "Unable to parse 'trace_count'. Expecting value >= -1, got:-2" }]);
  const unknown = await call(triton, 'POST', '/v2/models/nope/trace/setting', { trace_rate: '1' });
  assert.deepEqual([unknown.status, unknown.json], [400, { error: 'Request for unknown model : nope' }]);
});
