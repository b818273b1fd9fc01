// The trace settings store as Triton's TraceManager keeps it: answers per mode, model overrides over the
// global setting, the live count, Triton's refusals, per-model sampling and the Triton-mode file it feeds.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { servingTraceSchema } from '../../src/config/serving-trace-config-schema.ts';
import { HerdError } from '../../src/core/errors.ts';
import { parseTraceSettingUpdate, TraceSettings, type TraceSettingEntries } from '../../src/serving/trace-settings.ts';

const dir = mkdtempSync(join(tmpdir(), 'herd-trace-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const store = (trace: Record<string, unknown>, env: Record<string, string> = {}) => new TraceSettings(servingTraceSchema.parse(trace), { env });
const asObject = (entries: TraceSettingEntries) => Object.fromEntries(entries.map(([k, v]) => [k, k === 'trace_level' ? v : v[0]]));
const http = (values: Record<string, string[]>) => parseTraceSettingUpdate(values, 'http');

function refuses(action: () => unknown, code: string, message: string): void {
  assert.throws(action, (err: unknown) => {
    assert.ok(err instanceof HerdError);
    assert.deepEqual([err.code, err.message], [code, message]);
    return true;
  });
}

test("OpenTelemetry mode answers without trace_file and log_frequency, its own settings as strings, Triton's order", () => {
  const settings = store(
    { mode: 'opentelemetry', level: ['TIMESTAMPS'], rate: 1, opentelemetry: { url: 'localhost:4318/v1/traces', resource: { a: '1', b: '2' }, bsp_max_queue_size: 7 } },
    { OTEL_BSP_SCHEDULE_DELAY: '100' },
  );
  assert.deepEqual(settings.get(), [
    ['trace_level', ['TIMESTAMPS']],
    ['trace_rate', ['1']],
    ['trace_count', ['-1']],
    ['trace_mode', ['opentelemetry']],
    ['url', ['localhost:4318/v1/traces']],
    ['resource', ['a=1']],
    ['resource', ['b=2']],
    ['bsp_max_queue_size', ['7']],
    ['bsp_schedule_delay', ['100']],
    ['bsp_max_export_batch_size', ['512']],
  ]);
});

test('Triton mode answers its file and log frequency, and settings it was given without using them', () => {
  const settings = store({ triton: { file: '/tmp/t.json', log_frequency: 3, other: { foo: 'bar' } } });
  assert.deepEqual(asObject(settings.get()), {
    trace_level: ['OFF'],
    trace_rate: '1000',
    trace_count: '-1',
    log_frequency: '3',
    trace_file: '/tmp/t.json',
    trace_mode: 'triton',
    foo: 'bar',
  });
});

test('a model override mirrors the global values it does not set, and takes their changes; clearing all drops it', () => {
  const settings = store({ mode: 'opentelemetry', level: ['TIMESTAMPS'] });
  settings.update(http({ trace_rate: ['5'] }), 'simple');
  settings.update(http({ trace_count: ['9'], trace_rate: ['20'] }));
  assert.deepEqual([asObject(settings.get('simple'))['trace_rate'], asObject(settings.get('simple'))['trace_count']], ['5', '9']);
  settings.update(http({ trace_level: ['TIMESTAMPS', 'TENSORS'] }));
  assert.deepEqual(asObject(settings.get('simple'))['trace_level'], ['TIMESTAMPS', 'TENSORS']);
  settings.update(http({ trace_rate: [] }), 'simple');
  assert.equal(asObject(settings.get('simple'))['trace_rate'], '20', 'cleared: the global value again');
  settings.update(http({ trace_rate: [] }));
  assert.equal(asObject(settings.get())['trace_rate'], '1000', 'a cleared global value is its start value');
});

test('the count is live: traces taken lower it; models without their own setting share the global one', () => {
  const settings = store({ mode: 'opentelemetry', level: ['TIMESTAMPS'], rate: 1, count: 3 });
  assert.ok(settings.sample('a', { propagated: false }));
  assert.ok(settings.sample('b', { propagated: false }));
  assert.equal(asObject(settings.get('a'))['trace_count'], '1');
  settings.update(http({ trace_count: ['2'] }), 'own');
  assert.ok(settings.sample('own', { propagated: false }));
  assert.ok(settings.sample('own', { propagated: false }));
  assert.equal(settings.sample('own', { propagated: false }), undefined, 'its own count is used up');
  assert.ok(settings.sample('a', { propagated: false }), 'the global one still had 1');
  assert.equal(settings.sample('b', { propagated: false }), undefined);
  assert.deepEqual([asObject(settings.get())['trace_count'], asObject(settings.get('own'))['trace_count']], ['0', '0']);
  assert.ok(settings.sample('b', { propagated: true }), 'a propagated request is traced whatever the count');
  const ids = [settings.nextTraceId(), settings.nextTraceId()];
  assert.equal(ids[1], (ids[0] ?? 0) + 1);
});

test("Triton's refusals: an invalid setting may only turn tracing off; the wire checks in order", () => {
  const triton = store({});
  refuses(() => triton.update(http({ trace_level: ['TIMESTAMPS'] })), 'INVALID_ARG', 'Attempting to set invalid trace setting :trace file name is not given');
  assert.equal(asObject(triton.update(http({ trace_rate: ['0'] })))['trace_rate'], '0', 'invalid but off: allowed');
  const otel = store({ mode: 'opentelemetry', level: ['TIMESTAMPS'] });
  refuses(() => otel.update(http({ trace_rate: ['0'] })), 'INVALID_ARG', 'Attempting to set invalid trace setting :sample rate must be non-zero');
  refuses(() => otel.update(http({ trace_count: ['0'] })), 'INVALID_ARG', 'Attempting to set invalid trace setting :');
  assert.equal(asObject(otel.get())['trace_rate'], '1000', 'a refused update changes nothing');

  refuses(() => http({ trace_file: [], trace_level: ['OFF', 'X'] }), 'UNSUPPORTED', 'trace file location can not be updated through network protocol');
  refuses(() => http({ trace_level: ['TIMESTAMPS', 'OFF'] }), 'INVALID_ARG', "Expect only one trace level 'OFF' is specified");
  refuses(() => http({ trace_count: ['-2'] }), 'INVALID_ARG', "Unable to parse 'trace_count'. Expecting value >= -1, got:-2");
  refuses(() => parseTraceSettingUpdate({ trace_count: ['-2'] }, 'grpc'), 'INVALID_ARG', "Unable to parse 'trace_count'. Expecting value >= -1, got: -2");
  refuses(() => http({ trace_count: ['3000000000'] }), 'INVALID_ARG', "Unable to parse 'trace_count', value is out of range [ -1, 2147483647 ], got: 3000000000");
  refuses(() => http({ log_frequency: ['often'] }), 'INVALID_ARG', "Unable to parse 'log_frequency', got: often");
  refuses(() => parseTraceSettingUpdate({ trace_rate: ['1', '2'] }, 'grpc'), 'INVALID_ARG', "expect only 1 value for 'trace_rate'");
  assert.deepEqual(http({ trace_rate: ['-1'], trace_level: ['NOT_A_LEVEL'], trace_mode: ['x'] }), { trace_rate: 2 ** 32 - 1 }, 'wraps; unknown names and keys change nothing');
  assert.deepEqual(http({ trace_level: [], log_frequency: [] }), { trace_level: null, log_frequency: null }, '[] clears');
});

test('Triton mode: sampled requests of a model feed the trace file; a retired setting writes what it gathered', () => {
  const path = join(dir, 'trace.json');
  const settings = new TraceSettings(servingTraceSchema.parse({ level: ['TIMESTAMPS'], rate: 2, triton: { file: path, log_frequency: 0 } }));
  const stamps = [
    { name: 'REQUEST_START', ns: 1n },
    { name: 'REQUEST_END', ns: 2n },
  ];
  for (let i = 0; i < 4; i += 1) {
    const trace = settings.sample('simple', { propagated: true });
    trace?.finish([{ id: trace.id, model_name: 'simple', model_version: 1, timestamps: stamps }]);
  }
  settings.sample('simple', { propagated: false });
  const running = settings.sample('simple', { propagated: false });
  // A new global setting: the old one's traces go to the file, the new one starts counting again.
  settings.update(http({ trace_rate: ['1'] }));
  assert.match(readFileSync(path, 'utf8'), /"id":2,"model_name"/);
  running?.finish([{ id: running.id, model_name: 'simple', model_version: 1, timestamps: stamps }]);
  assert.match(readFileSync(path, 'utf8'), /"id":3,"model_name"/, 'a trace of a replaced setting is written when it ends');
  const next = settings.sample('simple', { propagated: false });
  next?.finish([{ id: next.id, model_name: 'simple', model_version: 1, timestamps: stamps }]);
  assert.doesNotMatch(readFileSync(path, 'utf8'), /"id":4,"model_name"/, 'the setting in force keeps its traces until shutdown');
  settings.close();
  const objects = JSON.parse(readFileSync(path, 'utf8')) as { id: number; model_name?: string }[];
  const ids = objects.filter((o) => o.model_name).map((o) => o.id);
  assert.deepEqual(ids, [1, 2, 3, 4], 'requests 2, 4 and 6 by rate (a traceparent changes nothing in Triton mode), then the next one');
});
