// Which configuration path each `herd serve` flag given overrides, for the Settings page's `flag --name`
// sources (describe-config-sources.ts). A test sets each flag and checks the config changes at its path.
import { describeTraceConfigPath } from './parse-trace-config.ts';

/** Commander's attribute → the flag and the path it sets (the flag is the source of everything under it). */
const FLAG_PATHS: Readonly<Record<string, readonly [flag: string, path: string]>> = {
  modelRepository: ['--model-repository', 'serving.model_repository'],
  modelStore: ['--model-store', 'serving.model_repository'],
  host: ['--host', 'server.host'],
  id: ['--id', 'server.id'],
  httpPort: ['--http-port', 'server.http_port'],
  grpcPort: ['--grpc-port', 'server.grpc_port'],
  grpcAddress: ['--grpc-address', 'server.grpc_address'],
  allowGrpc: ['--allow-grpc', 'server.allow_grpc'],
  allowHttp: ['--allow-http', 'server.allow_http'],
  logVerbose: ['--log-verbose', 'server.log_verbose'],
  drainGraceSecs: ['--drain-grace-secs', 'server.drain_grace_secs'],
  grpcInferAllocationPoolSize: ['--grpc-infer-allocation-pool-size', 'server.grpc_infer_allocation_pool_size'],
  grpcKeepaliveTime: ['--grpc-keepalive-time', 'server.grpc_keepalive.time_ms'],
  grpcKeepaliveTimeout: ['--grpc-keepalive-timeout', 'server.grpc_keepalive.timeout_ms'],
  grpcKeepalivePermitWithoutCalls: ['--grpc-keepalive-permit-without-calls', 'server.grpc_keepalive.permit_without_calls'],
  grpcHttp2MaxPingsWithoutData: ['--grpc-http2-max-pings-without-data', 'server.grpc_keepalive.http2_max_pings_without_data'],
  grpcHttp2MinRecvPingIntervalWithoutData: ['--grpc-http2-min-recv-ping-interval-without-data', 'server.grpc_keepalive.http2_min_recv_ping_interval_without_data_ms'],
  grpcHttp2MaxPingStrikes: ['--grpc-http2-max-ping-strikes', 'server.grpc_keepalive.http2_max_ping_strikes'],
  metricsPort: ['--metrics-port', 'server.metrics_port'],
  httpAddress: ['--http-address', 'server.http_address'],
  metricsAddress: ['--metrics-address', 'server.metrics_address'],
  httpRestrictedApi: ['--http-restricted-api', 'server.http_restricted_api'],
  grpcRestrictedProtocol: ['--grpc-restricted-protocol', 'server.grpc_restricted_protocol'],
  modelControlMode: ['--model-control-mode', 'serving.model_control_mode'],
  loadModel: ['--load-model', 'serving.load_model'],
  repositoryPollSecs: ['--repository-poll-secs', 'serving.repository_poll_secs'],
  strictReadiness: ['--strict-readiness', 'serving.strict_readiness'],
  httpMaxInputSize: ['--http-max-input-size', 'server.http_max_input_size'],
  exitTimeoutSecs: ['--exit-timeout-secs', 'server.exit_timeout_secs'],
  rateLimit: ['--rate-limit', 'serving.rate_limit'],
  // --cache-config replaces herd.yaml's serving.cache whole.
  cacheConfig: ['--cache-config', 'serving.cache'],
  uiBasePath: ['--ui-base-path', 'server.ui.base_path'],
  // Commander sets `ui` true unless --no-ui is given.
  ui: ['--no-ui', 'server.ui.enabled'],
  traceFile: ['--trace-file', 'serving.trace.triton.file'],
  traceLevel: ['--trace-level', 'serving.trace.level'],
  traceRate: ['--trace-rate', 'serving.trace.rate'],
  traceCount: ['--trace-count', 'serving.trace.count'],
  traceLogFrequency: ['--trace-log-frequency', 'serving.trace.triton.log_frequency'],
};

/** Flags serve-command.ts applies only when non-empty (`if (flags.host)`): an empty one leaves the file's value. */
const APPLIED_WHEN_NON_EMPTY: ReadonlySet<string> = new Set(['host', 'id', 'grpcAddress', 'httpAddress', 'metricsAddress']);

/** Path → flag, for the flags given (a flag setting one key of a map names that key's path). */
export function listServeFlagSources(flags: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  // Reversed so --model-repository, listed first, names serving.model_repository when both it and --model-store are given.
  for (const [attribute, [flag, path]] of Object.entries(FLAG_PATHS).reverse()) {
    const value = flags[attribute];
    if (value === undefined || (APPLIED_WHEN_NON_EMPTY.has(attribute) && !value) || (attribute === 'ui' && value !== false)) continue;
    out[path] = flag;
  }
  for (const text of stringsOf(flags['rateLimitResource'])) {
    out[`serving.rate_limit_resources.${text.split(':')[0] ?? ''}`] = '--rate-limit-resource';
  }
  for (const text of stringsOf(flags['backendConfig'])) {
    const comma = text.indexOf(',');
    const eq = text.indexOf('=', comma + 1);
    if (comma > 0 && eq > comma + 1) out[`serving.backend_config.${text.slice(0, comma)}.${text.slice(comma + 1, eq)}`] = '--backend-config';
  }
  for (const text of stringsOf(flags['traceConfig'])) {
    const path = describeTraceConfigPath(text);
    if (path !== undefined) out[path] = '--trace-config';
  }
  return out;
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
