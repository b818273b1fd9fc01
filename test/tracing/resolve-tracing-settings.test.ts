// herd.yaml's tracing section over the OTEL_* variables: one setting or one variable turns tracing on,
// OTEL_SDK_DISABLED turns it off, endpoints, headers, resource and sampler resolve as the OTel spec says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { herdConfigSchema } from '../../src/config/herd-config-schema.ts';
import { tracingConfigSchema } from '../../src/config/tracing-config-schema.ts';
import { resolveTracingSettings } from '../../src/tracing/resolve-tracing-settings.ts';

const resolve = (tracing: Record<string, unknown>, env: Record<string, string> = {}) => resolveTracingSettings(tracingConfigSchema.parse(tracing), env, 'instance-1');

test('off by default; on by `enabled: true` or by an OTLP endpoint variable; OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none win over the variables', () => {
  assert.equal(resolve({}).enabled, false);
  assert.equal(herdConfigSchema.parse({}).tracing.enabled, undefined);
  assert.equal(resolve({ enabled: true }).enabled, true);
  assert.equal(resolve({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).enabled, true);
  assert.equal(resolve({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).enabled, true);
  assert.equal(resolve({}, { OTEL_TRACES_EXPORTER: 'otlp' }).enabled, true);
  assert.equal(resolve({ enabled: false }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).enabled, false);
  assert.equal(resolve({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).enabled, false);
  assert.equal(resolve({ enabled: true }, { OTEL_SDK_DISABLED: 'true' }).enabled, false);
  assert.equal(resolve({ enabled: true }, { OTEL_SDK_DISABLED: 'false' }).enabled, true);
});

test('the endpoint: herd.yaml, else the traces variable as written, else the shared base plus /v1/traces, else localhost', () => {
  assert.equal(resolve({}).url, 'http://localhost:4318/v1/traces');
  assert.equal(resolve({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).url, 'http://collector:4318/v1/traces');
  assert.equal(resolve({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/otlp' }).url, 'https://otlp.example.com/otlp/v1/traces');
  assert.equal(resolve({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom' }).url, 'http://b:4318/custom');
  assert.equal(resolve({ endpoint: 'http://yaml:4318/v1/traces' }, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/x' }).url, 'http://yaml:4318/v1/traces');
  assert.throws(() => resolve({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), /not an http/);
  // Off, a malformed variable stops nothing.
  assert.equal(resolve({ enabled: false }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }).enabled, false);
  assert.throws(() => tracingConfigSchema.parse({ endpoint: 'grpc://x' }));
  assert.throws(() => tracingConfigSchema.parse({ max_queue_size: 10, max_export_batch_size: 20 }));
});

test('resource: defaults, OTEL_RESOURCE_ATTRIBUTES (percent-decoded), herd.yaml over them, OTEL_SERVICE_NAME, service_name last', () => {
  const plain = resolve({});
  assert.equal(plain.resource['service.name'], 'herd');
  assert.equal(plain.resource['service.instance.id'], 'instance-1');
  const env = { OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs,team=ml%20ops,region=eu' };
  assert.equal(resolve({}, env).resource['service.name'], 'from-attrs');
  assert.equal(resolve({}, env).resource['team'], 'ml ops');
  assert.equal(resolve({}, { ...env, OTEL_SERVICE_NAME: 'svc' }).resource['service.name'], 'svc');
  assert.equal(resolve({ service_name: 'yaml', resource_attributes: { region: 'us' } }, { ...env, OTEL_SERVICE_NAME: 'svc' }).resource['service.name'], 'yaml');
  assert.equal(resolve({ resource_attributes: { region: 'us' } }, env).resource['region'], 'us');
  const bad = resolve({}, { OTEL_RESOURCE_ATTRIBUTES: 'novalue,ok=1,broken=%zz' });
  assert.equal(bad.resource['ok'], '1');
  assert.equal(bad.warnings.length, 2);
});

test('headers: herd.yaml, OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TRACES_HEADERS, headers_env, later over earlier; warnings never hold a value', () => {
  const s = resolve(
    { headers: { 'X-Tenant': 'a' }, headers_env: 'MY_HEADERS' },
    { OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=b,authorization=Basic%20abc', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=c', MY_HEADERS: 'x-token=secret-1,bad=%zzsecret' },
  );
  assert.deepEqual(s.headers, { 'x-tenant': 'c', authorization: 'Basic abc', 'x-token': 'secret-1' });
  assert.equal(s.warnings.join('\n').includes('secret'), false);
});

test('sampler: sampler_ratio (parent-based), else OTEL_TRACES_SAMPLER and its argument, else parent-based always on', () => {
  assert.deepEqual(resolve({}).sampler, { ratio: 1, parentBased: true });
  assert.deepEqual(resolve({ sampler_ratio: 0.1 }, { OTEL_TRACES_SAMPLER: 'always_off' }).sampler, { ratio: 0.1, parentBased: true });
  assert.deepEqual(resolve({}, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).sampler, { ratio: 0.25, parentBased: true });
  assert.deepEqual(resolve({}, { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' }).sampler, { ratio: 0.5, parentBased: false });
  assert.deepEqual(resolve({}, { OTEL_TRACES_SAMPLER: 'always_off' }).sampler, { ratio: 0, parentBased: false });
  assert.deepEqual(resolve({}, { OTEL_TRACES_SAMPLER: 'parentbased_always_off' }).sampler, { ratio: 0, parentBased: true });
  const bad = resolve({}, { OTEL_TRACES_SAMPLER: 'jaeger_remote' });
  assert.deepEqual(bad.sampler, { ratio: 1, parentBased: true });
  assert.match(bad.warnings[0] ?? '', /jaeger_remote/);
  assert.match(resolve({}, { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }).warnings[0] ?? '', /not a ratio/);
  assert.equal(resolve({ sampler_ratio: 0 }).sampler.ratio, 0);
  assert.throws(() => tracingConfigSchema.parse({ sampler_ratio: 1.5 }));
});

test('a protocol other than http/protobuf is named in a warning', () => {
  assert.match(resolve({}, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).warnings[0] ?? '', /http\/protobuf only/);
  assert.deepEqual(resolve({}, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }).warnings, []);
});
