// `herd serve`: flags named like tritonserver's where they mean the same; flags win over herd.yaml.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { type HerdServer, startHerd } from '../app.ts';
import { type ConfigSources, describeConfigSources } from '../config/describe-config-sources.ts';
import type { HerdConfig } from '../config/herd-config-schema.ts';
import { redactEnvValues } from '../config/interpolate-env.ts';
import { defaultHerdConfig, loadHerdConfigFile } from '../config/load-herd-config.ts';
import { HerdError } from '../core/errors.ts';
import { createDrainHandler } from './drain-on-signal.ts';
import { formatModelTable } from './format-model-table.ts';
import { listIgnoredTritonFlags, registerIgnoredTritonFlags, resolveTraceFlags } from './triton-compat-flags.ts';
import { parseCacheConfigFlags } from './parse-cache-config-flags.ts';
import { normalizeBasePath } from '../config/ui-config-schema.ts';
import { listServeFlagSources } from './list-serve-flag-sources.ts';

export interface ServeFlags {
  config?: string;
  modelRepository?: string[];
  /** tritonserver's older name for --model-repository, which KServe's Triton runtime passes. */
  modelStore?: string[];
  host?: string;
  id?: string;
  httpPort?: string;
  grpcPort?: string;
  grpcAddress?: string;
  httpAddress?: string;
  metricsAddress?: string;
  httpRestrictedApi?: string[];
  grpcRestrictedProtocol?: string[];
  allowGrpc?: string | boolean;
  allowHttp?: string | boolean;
  logVerbose?: string;
  drainGraceSecs?: string;
  grpcInferAllocationPoolSize?: string;
  grpcKeepaliveTime?: string;
  grpcKeepaliveTimeout?: string;
  grpcKeepalivePermitWithoutCalls?: string | boolean;
  grpcHttp2MaxPingsWithoutData?: string;
  grpcHttp2MinRecvPingIntervalWithoutData?: string;
  grpcHttp2MaxPingStrikes?: string;
  metricsPort?: string;
  modelControlMode?: string;
  loadModel?: string[];
  repositoryPollSecs?: string;
  strictReadiness?: string | boolean;
  httpMaxInputSize?: string;
  exitTimeoutSecs?: string;
  rateLimit?: string;
  rateLimitResource?: string[];
  cacheConfig?: string[];
  backendConfig?: string[];
  uiBasePath?: string;
  /** false with --no-ui (commander's negated flag; true otherwise). */
  ui?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerServeCommand(program: Command): void {
  const command = program
    .command('serve')
    // `herd tritonserver --model-store=…`: the args of KServe's Triton ServingRuntime, with the image swapped, start Herd.
    .alias('tritonserver')
    .description('serve a Triton model repository (KServe v2 HTTP) and the LLM gateway')
    .option('--config <file>', 'herd.yaml (default: ./herd.yaml when present, else built-in defaults)')
    .option('--model-repository <dir>', 'model repository path (repeatable)', collect)
    .option('--model-store <dir>', "tritonserver's older name for --model-repository (KServe's Triton runtime passes it)", collect)
    .option('--host <address>', 'address to listen on')
    .option('--id <name>', "server id reported by GET /v2 (default 'triton', as Triton's clients expect)")
    .option('--http-port <port>', 'KServe HTTP port (default 8000)')
    .option('--grpc-port <port>', 'KServe gRPC port (default 8001)')
    .option('--grpc-address <address>', 'address the gRPC service listens on (default: --host)')
    .option('--allow-grpc [bool]', 'serve KServe gRPC (default true)')
    .option('--allow-http [bool]', 'serve KServe HTTP and the /v1 gateway (default true; false is refused when herd.yaml configures gateway models)')
    .option('--log-verbose <level>', "tritonserver's verbose level, reported by /v2/logging (Herd's own lines do not change)")
    .option('--grpc-infer-allocation-pool-size <n>', 'accepted for tritonserver parity (Herd keeps no response pool)')
    .option('--grpc-keepalive-time <ms>', 'period of server keepalive pings (default 7200000)')
    .option('--grpc-keepalive-timeout <ms>', 'how long a keepalive ping waits for its ack (default 20000)')
    .option('--grpc-keepalive-permit-without-calls [bool]', 'allow keepalive pings with no call open (default false)')
    .option('--grpc-http2-max-pings-without-data <n>', 'pings sent with no data before one is (default 2)')
    .option('--grpc-http2-min-recv-ping-interval-without-data <ms>', 'least interval between client pings with no data (default 300000)')
    .option('--grpc-http2-max-ping-strikes <n>', 'bad pings tolerated before closing (default 2)')
    .option('--metrics-port <port>', 'Prometheus metrics port (default 8002)')
    .option('--http-address <address>', 'address the HTTP port listens on (default: --host)')
    .option('--metrics-address <address>', 'address the metrics port listens on, e.g. 127.0.0.1 (default: --host)')
    .option('--http-restricted-api <groups:header=value>', "tritonserver's: HTTP requests to those API groups need that header (repeatable)", collect)
    .option('--grpc-restricted-protocol <groups:key=value>', "tritonserver's: gRPC calls to those groups need metadata triton-grpc-protocol-<key> (repeatable)", collect)
    .option('--model-control-mode <mode>', 'none | poll | explicit')
    .option('--load-model <name>', "model to load at start in explicit mode, '*' for all (repeatable)", collect)
    .option('--repository-poll-secs <secs>', 'poll interval in poll mode')
    .option('--strict-readiness [bool]', 'ready only when every model is ready (default true)')
    .option('--http-max-input-size <bytes>', 'largest request body accepted (default 64 MB)')
    .option('--exit-timeout-secs <secs>', 'on SIGTERM/SIGINT, seconds until exit however much is still running, the drain grace included (default 30)')
    .option('--drain-grace-secs <secs>', 'on SIGTERM, seconds the listeners keep answering while readiness answers 503 (default 5; 0: close at once)')
    .option('--rate-limit <mode>', 'off | execution_count: instances hold their rate_limiter resources while executing')
    .option('--rate-limit-resource <name:count>', 'size of a rate-limiter resource pool, e.g. gpu_memory_mb:40960 (repeatable)', collect)
    .option(
      '--cache-config <cache,setting=value>',
      'response cache for models with response_cache enabled, as tritonserver: local,size=BYTES or redis,host=H plus redis,port=P (one setting per flag, repeatable; replaces herd.yaml serving.cache)',
      collect,
    )
    .option('--backend-config <backend,key=value>', "a backend's setting, e.g. python,python-executable=/usr/bin/python3 (repeatable)", collect)
    .option('--ui-base-path <path>', "the path prefix a reverse proxy mounts Herd under, e.g. /tools/herd (the console's cookie Path; default '')")
    .option('--no-ui', 'do not serve the web console at /ui');
  registerIgnoredTritonFlags(command);
  command.action(async (flags: ServeFlags & Record<string, unknown>) => {
    const { config, configSources } = resolveServeSetup(flags);
    for (const line of listIgnoredTritonFlags(flags)) process.stderr.write(`warning: ${line}\n`);
    await runServer(config, configSources);
  });
}

export function resolveServeConfig(flags: ServeFlags): HerdConfig {
  return resolveServeSetup(flags).config;
}

/** The configuration `herd serve` runs with, and where each of its values came from (the console's Settings page). */
export function resolveServeSetup(flags: ServeFlags): { config: HerdConfig; configSources: ConfigSources } {
  const file = flags.config ?? (existsSync('herd.yaml') ? 'herd.yaml' : undefined);
  const loaded = file ? loadHerdConfigFile(file) : undefined;
  const config = applyServeFlags(loaded?.config ?? defaultHerdConfig(), flags);
  const source = file !== undefined && loaded?.text !== undefined ? { path: resolve(file), text: loaded.text, envNames: loaded.envNames } : undefined;
  const flagSources = listServeFlagSources(flags as Readonly<Record<string, unknown>>);
  return { config, configSources: describeConfigSources({ config, file: source, flags: flagSources }) };
}

/** Flags win over herd.yaml; the checks that need both run last. */
function applyServeFlags(config: HerdConfig, flags: ServeFlags): HerdConfig {
  const server = { ...config.server };
  const serving = { ...config.serving };
  const repositories = [...(flags.modelRepository ?? []), ...(flags.modelStore ?? [])];
  if (repositories.length > 0) serving.model_repository = repositories.map((p) => resolve(p));
  if (flags.host) server.host = flags.host;
  if (flags.id) server.id = flags.id;
  if (flags.httpPort !== undefined) server.http_port = parseInteger('--http-port', flags.httpPort, 0, 65535);
  if (flags.grpcPort !== undefined) server.grpc_port = parseInteger('--grpc-port', flags.grpcPort, 0, 65535);
  if (flags.grpcAddress) server.grpc_address = flags.grpcAddress;
  if (flags.allowGrpc !== undefined) server.allow_grpc = parseBool('--allow-grpc', flags.allowGrpc);
  if (flags.allowHttp !== undefined) server.allow_http = parseBool('--allow-http', flags.allowHttp);
  if (flags.logVerbose !== undefined) server.log_verbose = parseInteger('--log-verbose', flags.logVerbose, 0, 2 ** 31 - 1);
  if (flags.drainGraceSecs !== undefined) server.drain_grace_secs = parseSeconds('--drain-grace-secs', flags.drainGraceSecs);
  if (flags.grpcInferAllocationPoolSize !== undefined) {
    server.grpc_infer_allocation_pool_size = parseInteger('--grpc-infer-allocation-pool-size', flags.grpcInferAllocationPoolSize, 0, 2 ** 31 - 1);
  }
  server.grpc_keepalive = resolveKeepalive(server.grpc_keepalive, flags);
  if (flags.metricsPort !== undefined) server.metrics_port = parseInteger('--metrics-port', flags.metricsPort, 0, 65535);
  if (flags.httpAddress) server.http_address = flags.httpAddress;
  if (flags.metricsAddress) server.metrics_address = flags.metricsAddress;
  if (flags.httpRestrictedApi) server.http_restricted_api = flags.httpRestrictedApi;
  if (flags.ui === false) server.ui = { ...server.ui, enabled: false };
  if (flags.uiBasePath !== undefined) {
    const base = normalizeBasePath(flags.uiBasePath);
    if (base === undefined)
      throw new HerdError('INVALID_ARG', `--ui-base-path must be a path such as /tools/herd (starting with '/', without '..' or '//'), got '${flags.uiBasePath}'`);
    server.ui = { ...server.ui, base_path: base };
  }
  if (flags.grpcRestrictedProtocol) server.grpc_restricted_protocol = flags.grpcRestrictedProtocol;
  if (flags.modelControlMode !== undefined) {
    const mode = flags.modelControlMode.toLowerCase();
    if (mode !== 'none' && mode !== 'poll' && mode !== 'explicit')
      throw new HerdError('INVALID_ARG', `--model-control-mode must be none, poll or explicit, got '${flags.modelControlMode}'`);
    serving.model_control_mode = mode;
  }
  if (flags.loadModel) serving.load_model = flags.loadModel;
  if (flags.repositoryPollSecs !== undefined) serving.repository_poll_secs = parseInteger('--repository-poll-secs', flags.repositoryPollSecs, 0, 86400);
  if (flags.strictReadiness !== undefined) serving.strict_readiness = parseBool('--strict-readiness', flags.strictReadiness);
  if (flags.httpMaxInputSize !== undefined) server.http_max_input_size = parseInteger('--http-max-input-size', flags.httpMaxInputSize, 1, Number.MAX_SAFE_INTEGER);
  if (flags.exitTimeoutSecs !== undefined) server.exit_timeout_secs = parseInteger('--exit-timeout-secs', flags.exitTimeoutSecs, 0, 86400);
  if (flags.rateLimit !== undefined) {
    if (flags.rateLimit !== 'off' && flags.rateLimit !== 'execution_count')
      throw new HerdError('INVALID_ARG', `--rate-limit must be off or execution_count, got '${flags.rateLimit}'`);
    serving.rate_limit = flags.rateLimit;
  }
  if (flags.rateLimitResource) {
    serving.rate_limit_resources = { ...serving.rate_limit_resources, ...Object.fromEntries(flags.rateLimitResource.map(parseResource)) };
  }
  if (flags.cacheConfig) serving.cache = parseCacheConfigFlags(flags.cacheConfig);
  serving.trace = resolveTraceFlags(flags, serving.trace);
  if (flags.backendConfig) {
    const merged: Record<string, Record<string, string>> = { ...serving.backend_config };
    for (const text of flags.backendConfig) {
      const [backend, key, value] = parseBackendConfig(text);
      merged[backend] = { ...merged[backend], [key]: value };
    }
    serving.backend_config = merged;
  }
  if (serving.model_repository.length === 0 && Object.keys(config.models).length === 0) {
    throw new HerdError('INVALID_ARG', 'nothing to serve: pass --model-repository DIR, or set serving.model_repository or gateway models in herd.yaml');
  }
  if (!server.allow_http && Object.keys(config.models).length > 0) {
    throw new HerdError('INVALID_ARG', '--allow-http=false leaves the LLM gateway (served on the HTTP port) unreachable: allow HTTP, or serve without gateway models in herd.yaml');
  }
  if (serving.load_model.length > 0 && serving.model_control_mode !== 'explicit') {
    throw new HerdError('INVALID_ARG', '--load-model is only allowed with --model-control-mode=explicit');
  }
  return { ...config, server, serving };
}

async function runServer(config: HerdConfig, configSources: ConfigSources): Promise<void> {
  const log = (line: string) => process.stderr.write(`${redactEnvValues(line)}\n`);
  const server = await startHerd(config, { log, configSources });
  process.stdout.write(`${formatModelTable(server.repository.summary())}\n`);
  for (const problem of server.repository.repositoryErrors) process.stdout.write(`warning: ${problem}\n`);
  if (config.server.allow_http) process.stdout.write(`Started HTTPService at ${config.server.http_address ?? config.server.host}:${config.server.http_port} (${server.httpUrl})\n`);
  else process.stdout.write('HTTPService not started (--allow-http=false)\n');
  if (server.grpcUrl) process.stdout.write(`Started GRPCInferenceService at ${config.server.grpc_address ?? config.server.host}:${config.server.grpc_port} (${server.grpcUrl})\n`);
  process.stdout.write(`Started Metrics Service at ${config.server.metrics_address ?? config.server.host}:${config.server.metrics_port} (${server.metricsUrl}/metrics)\n`);
  if (server.gateway) {
    const health = server.gateway.health();
    const enabled = health.providers.filter((p) => p.enabled).map((p) => p.name);
    process.stdout.write(
      `LLM gateway at ${server.httpUrl}/v1: ${health.models.filter((m) => m.available).length} of ${health.models.length} models available; providers enabled: ${enabled.join(', ') || 'none'}\n`,
    );
    for (const p of health.providers.filter((x) => !x.enabled)) process.stdout.write(`  provider ${p.name} disabled: ${p.reason}\n`);
  }
  if (server.gatewayWarning) process.stdout.write(`warning: ${server.gatewayWarning}\n`);
  process.stdout.write(`Model control mode: ${config.serving.model_control_mode}; repositories: ${config.serving.model_repository.join(', ')}\n`);
  process.stdout.write(`${describeReadiness(server)}\n`);

  const onSignal = createDrainHandler(
    server,
    { graceSecs: config.server.drain_grace_secs, exitTimeoutSecs: config.server.exit_timeout_secs },
    { say: (line) => process.stdout.write(`${line}\n`), exit: (code) => process.exit(code) },
  );
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
}

/** Triton's `<backend>,<key>=<value>` (a value may itself hold '=' or ','). */
function parseBackendConfig(text: string): [string, string, string] {
  const comma = text.indexOf(',');
  const eq = text.indexOf('=', comma + 1);
  if (comma <= 0 || eq <= comma + 1) {
    throw new HerdError('INVALID_ARG', `--backend-config must be <backend>,<setting>=<value>, e.g. python,python-executable=/usr/bin/python3; got '${text}'`);
  }
  return [text.slice(0, comma), text.slice(comma + 1, eq), text.slice(eq + 1)];
}

function resolveKeepalive(current: HerdConfig['server']['grpc_keepalive'], flags: ServeFlags): HerdConfig['server']['grpc_keepalive'] {
  const k = { ...current };
  const int = (flag: string, value: string) => parseInteger(flag, value, 0, 2 ** 31 - 1);
  if (flags.grpcKeepaliveTime !== undefined) k.time_ms = int('--grpc-keepalive-time', flags.grpcKeepaliveTime);
  if (flags.grpcKeepaliveTimeout !== undefined) k.timeout_ms = int('--grpc-keepalive-timeout', flags.grpcKeepaliveTimeout);
  if (flags.grpcKeepalivePermitWithoutCalls !== undefined) k.permit_without_calls = parseBool('--grpc-keepalive-permit-without-calls', flags.grpcKeepalivePermitWithoutCalls);
  if (flags.grpcHttp2MaxPingsWithoutData !== undefined) k.http2_max_pings_without_data = int('--grpc-http2-max-pings-without-data', flags.grpcHttp2MaxPingsWithoutData);
  if (flags.grpcHttp2MinRecvPingIntervalWithoutData !== undefined) {
    k.http2_min_recv_ping_interval_without_data_ms = int('--grpc-http2-min-recv-ping-interval-without-data', flags.grpcHttp2MinRecvPingIntervalWithoutData);
  }
  if (flags.grpcHttp2MaxPingStrikes !== undefined) k.http2_max_ping_strikes = int('--grpc-http2-max-ping-strikes', flags.grpcHttp2MaxPingStrikes);
  return k;
}

/** Triton's NAME:COUNT[:DEVICE]; the device is accepted and ignored (one CPU pool). */
function parseResource(text: string): [string, number] {
  const [name, count, device] = text.split(':');
  const n = Number(count);
  if (!name || !Number.isInteger(n) || n <= 0 || (device !== undefined && !/^-?\d+$/.test(device))) {
    throw new HerdError('INVALID_ARG', `--rate-limit-resource must be NAME:COUNT with a positive integer count, got '${text}'`);
  }
  return [name, n];
}

function parseInteger(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new HerdError('INVALID_ARG', `${flag} must be an integer from ${min} to ${max}, got '${value}'`);
  return n;
}

function parseSeconds(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 86400) throw new HerdError('INVALID_ARG', `${flag} must be a number of seconds from 0 to 86400, got '${value}'`);
  return n;
}

function parseBool(flag: string, value: string | boolean): boolean {
  if (typeof value === 'boolean') return value;
  const v = value.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new HerdError('INVALID_ARG', `${flag} must be true or false, got '${value}'`);
}

/** The start-up's last line: whether a client (or a script waiting on /v2/health/ready) may begin. */
export function describeReadiness(server: Pick<HerdServer, 'httpUrl' | 'isReady' | 'repository'>): string {
  if (server.isReady()) return `Ready: ${server.httpUrl}/v2/health/ready answers 200`;
  const waiting = server.repository
    .summary()
    .filter((m) => m.state !== 'READY')
    .map((m) => m.name);
  return `Not ready: ${server.httpUrl}/v2/health/ready answers 400 while ${waiting.length === 1 ? 'this model is' : 'these models are'} not READY: ${waiting.join(', ')} (strict readiness)`;
}
