// Every `herd serve` flag that sets a value names the path it really changes, so the Settings page's "flag --x" is true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { listServeFlagSources } from '../../src/cli/list-serve-flag-sources.ts';
import { registerServeCommand, resolveServeConfig, resolveServeSetup, type ServeFlags } from '../../src/cli/serve-command.ts';

/** A value for each flag that differs from herd.yaml below and from the defaults. */
const SAMPLES: Record<string, unknown> = {
  modelRepository: ['/srv/models-a'],
  modelStore: ['/srv/models-b'],
  host: '10.1.1.1',
  id: 'edge',
  httpPort: '1234',
  grpcPort: '1235',
  grpcAddress: '10.2.2.2',
  allowGrpc: 'false',
  allowHttp: 'false',
  logVerbose: '2',
  drainGraceSecs: '7',
  grpcInferAllocationPoolSize: '3',
  grpcKeepaliveTime: '5',
  grpcKeepaliveTimeout: '6',
  grpcKeepalivePermitWithoutCalls: 'true',
  grpcHttp2MaxPingsWithoutData: '9',
  grpcHttp2MinRecvPingIntervalWithoutData: '11',
  grpcHttp2MaxPingStrikes: '13',
  metricsPort: '1236',
  httpAddress: '10.3.3.3',
  metricsAddress: '10.4.4.4',
  httpRestrictedApi: ['inference:x-k=v'],
  grpcRestrictedProtocol: ['health:k=v'],
  modelControlMode: 'poll',
  loadModel: ['m'],
  repositoryPollSecs: '99',
  strictReadiness: 'false',
  httpMaxInputSize: '100',
  exitTimeoutSecs: '9',
  rateLimit: 'execution_count',
  rateLimitResource: ['gpu:4'],
  cacheConfig: ['local,size=100'],
  uiBasePath: '/tools/herd',
  ui: false,
  backendConfig: ['python,shm-default-byte-size=1024'],
  traceConfig: ['rate=5'],
  traceFile: '/tmp/trace.json',
  traceLevel: ['TIMESTAMPS'],
  traceRate: '5',
  traceCount: '5',
  traceLogFrequency: '5',
};

function writeConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'herd-flags-'));
  const file = join(dir, 'herd.yaml');
  writeFileSync(file, 'server:\n  http_port: 9000\nserving:\n  model_repository: [./models]\n');
  return file;
}

function valueAt(root: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), root);
}

test('each flag given is the source of a path it changes', () => {
  const config = writeConfig();
  const base = resolveServeConfig({ config });
  for (const [attribute, sample] of Object.entries(SAMPLES)) {
    const flags = { config, [attribute]: sample, ...(attribute === 'loadModel' ? { modelControlMode: 'explicit' } : {}) } as ServeFlags;
    const sources = Object.entries(listServeFlagSources(flags as Record<string, unknown>)).filter(
      ([, flag]) => flag !== '--model-control-mode' || attribute === 'modelControlMode',
    );
    assert.equal(sources.length, 1, `${attribute}: ${JSON.stringify(sources)}`);
    const [path] = sources[0] as [string, string];
    assert.notDeepEqual(valueAt(resolveServeConfig(flags), path), valueAt(base, path), `${attribute} changes ${path}`);
  }
});

test('every value-setting option of herd serve has a sample here (a new flag must name its path)', () => {
  const program = new Command();
  registerServeCommand(program);
  const serve = program.commands.find((c) => c.name() === 'serve');
  assert.ok(serve);
  const settable = serve.options.filter((o) => o.attributeName() !== 'config' && !o.description.includes('accepted and ignored')).map((o) => o.attributeName());
  assert.deepEqual(
    settable.filter((a) => !(a in SAMPLES)),
    [],
  );
});

test('empty --host leaves the file value (as serve applies it); map flags name the key they set', () => {
  assert.deepEqual(listServeFlagSources({ host: '' }), {});
  assert.deepEqual(listServeFlagSources({ modelRepository: ['a'], modelStore: ['b'] }), { 'serving.model_repository': '--model-repository' });
  assert.deepEqual(listServeFlagSources({ rateLimitResource: ['gpu:4', 'mem:8:0'], backendConfig: ['python,k=v=w'] }), {
    'serving.rate_limit_resources.gpu': '--rate-limit-resource',
    'serving.rate_limit_resources.mem': '--rate-limit-resource',
    'serving.backend_config.python.k': '--backend-config',
  });
  assert.deepEqual(listServeFlagSources({ traceConfig: ['mode=opentelemetry', 'opentelemetry,resource=a=b', 'triton,log-frequency=2', 'bogus'] }), {
    'serving.trace.mode': '--trace-config',
    'serving.trace.opentelemetry.resource.a': '--trace-config',
    'serving.trace.triton.log_frequency': '--trace-config',
  });
});

test('resolveServeSetup: the flag, the file and the defaults each named as the source', () => {
  const config = writeConfig();
  const { configSources } = resolveServeSetup({ config, grpcPort: '1235' });
  const source = (path: string) => configSources.entries.find((e) => e.path === path)?.source;
  assert.equal(configSources.configFile, config);
  assert.equal(source('server.grpc_port'), 'flag --grpc-port');
  assert.equal(source('server.http_port'), 'herd.yaml:2:14');
  assert.equal(source('serving.model_repository'), 'herd.yaml:4:21');
  assert.equal(source('server.metrics_port'), 'default');
});
