// The composition root: builds the serving side from a HerdConfig, wires it to the HTTP and gRPC transports,
// and owns start-up and the draining shutdown. Nothing else constructs concrete pieces.
import type { FastifyInstance } from 'fastify';
import type { ConfigSources } from './config/describe-config-sources.ts';
import type { HerdConfig } from './config/herd-config-schema.ts';
import { createApiGroupGuard, resolveApiGroupRules } from './core/api-groups.ts';
import type { ChatPort } from './core/chat-port.ts';
import type { ChatGateway } from './gateway/flow/chat-gateway.ts';
import { createServingChatPort } from './gateway/flow/serving-chat-port.ts';
import { createServingInferencePort } from './serving/serving-inference-port.ts';
import { startGrpcServer, type RunningGrpcServer } from './grpc/start-grpc-server.ts';
import { createServingStatsSource } from './http/convert-model-statistics-to-snapshot.ts';
import { createHttpApp } from './http/create-http-app.ts';
import { startMetricsServer } from './http/metrics-server.ts';
import { createMetricsRegistry } from './metrics/create-metrics-registry.ts';
import { CustomMetricRegistry } from './metrics/custom-metric-registry.ts';
import { registerCancelledMetrics, registerInferenceMetrics } from './metrics/inference-metrics.ts';
import type { BackendFactory } from './serving/backends/backend.ts';
import { jsBackend } from './serving/backends/js/js-backend.ts';
import { createLlmBackend } from './serving/backends/llm/llm-backend.ts';
import { createLazyBackend } from './serving/backends/lazy-backend.ts';
import type { ModelLogLevels } from './serving/backends/python/format-model-log.ts';
import type { BlsInference } from './serving/backends/python/python-bls-bridge.ts';
import { parsePythonBackendSettings } from './serving/backends/python/python-backend-options.ts';
import { InferenceService } from './serving/inference-service.ts';
import { LogSettings } from './serving/log-settings.ts';
import { describeConfigSources } from './config/describe-config-sources.ts';
import { SystemSharedMemoryRegistry } from './serving/shared-memory/system-shared-memory-registry.ts';
import { TraceSettings } from './serving/trace-settings.ts';
import { ModelRepositoryManager, type LoadedModel } from './serving/repository/model-repository-manager.ts';
import { createInferenceResponseCache } from './serving/response-cache/create-inference-response-cache.ts';
import { RateLimiter } from './serving/scheduler/rate-limiter.ts';
import { createSafeLog } from './core/escape-log-text.ts';
import { gatewayRoutesOf, startGateway, type RunningGateway } from './start-gateway.ts';
import type { ConsoleOptions } from './http/console/console-routes.ts';
import { ConsoleSessionAuth } from './http/console/session-auth.ts';
import { closeTailsOf } from './http/console/requests-tail-route.ts';
import { HERD_VERSION } from './core/herd-version.ts';
import { registerTracingMetrics } from './metrics/tracing-metrics.ts';
import { createTracing, type Tracing } from './tracing/create-tracing.ts';
import { mergeTritonTraceConfig } from './tracing/merge-triton-trace-config.ts';

export { createGatewayFlow, type GatewayFlowParts } from './start-gateway.ts';

export interface HerdServer {
  /** Base URL of the KServe HTTP endpoint, e.g. http://127.0.0.1:8000 */
  httpUrl: string;
  /** host:port of the KServe gRPC endpoint, e.g. 127.0.0.1:8001; undefined with allow_grpc false. */
  grpcUrl: string | undefined;
  /** Base URL of the Prometheus endpoint (GET /metrics), e.g. http://127.0.0.1:8002 */
  metricsUrl: string;
  repository: ModelRepositoryManager;
  /**
   * Spans (tracing.tracer: the no-op tracer unless herd.yaml or OTEL_* turn tracing on): made first so every part
   * may start spans, closed last so close() flushes what they ended.
   */
  tracing: Tracing;
  /** The LLM gateway (the one chat flow: models, health, handle()), when herd.yaml configures models. */
  gateway: ChatGateway | undefined;
  /** Set when the gateway runs without authentication (the CLI prints it). */
  gatewayWarning: string | undefined;
  /** What GET /v2/health/ready answers: true for 200. */
  isReady(): boolean;
  /** A drain's first step: readiness answers 503 (gRPC: not ready), answers carry `Connection: close`; the listeners keep serving. */
  beginDrain(): void;
  /** Writes what the ledger holds queued (a forced exit's last step; close() does it too). */
  flushLedger(): Promise<void>;
  /** Stops accepting (gRPC: GOAWAY), answers every accepted request, unloads models, flushes the ledger. Idempotent. */
  close(): Promise<void>;
}

export interface StartOptions {
  log?: (line: string) => void;
  /** Where upstream API keys are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The console's built files (default: the package's dist/ui); tests point it at a fixture. */
  consoleRoot?: string;
  /** The effective configuration with each value's source, secrets masked: the console's Settings page. */
  configSources?: ConfigSources;
}

export interface BackendOptions {
  /** serving.backend_config / --backend-config, per backend name. */
  backendConfig?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  log?: (line: string) => void;
  /** The serving side's inference, for Python models' BLS calls; asked for when a model loads. */
  inference?: () => BlsInference | undefined;
  /** Read per llm call: the gateway starts after the repository has loaded its models. */
  chatPort?: () => ChatPort | undefined;
  /** Where child processes' allow-listed variables come from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Variables holding Herd's secrets, which a model config may not pass to its processes. */
  protectedEnvNames?: readonly string[];
  /** Where models' custom metrics (pb_utils.MetricFamily) are shown: the server's /metrics. */
  metrics?: CustomMetricRegistry;
  /** The server's log settings now: which of a Python model's pb_utils.Logger records show. */
  logLevels?: () => ModelLogLevels;
}

export function createBackends(options: BackendOptions = {}): ReadonlyMap<string, BackendFactory> {
  const log = options.log ?? (() => undefined);
  const pythonSettings = parsePythonBackendSettings(options.backendConfig?.['python'] ?? {}, log);
  return new Map<string, BackendFactory>([
    ['onnxruntime', createLazyBackend('onnxruntime', async () => (await import('./serving/backends/onnxruntime/onnxruntime-backend.ts')).onnxRuntimeBackend)],
    [jsBackend.name, jsBackend],
    [
      'python',
      createLazyBackend('python', async () =>
        (await import('./serving/backends/python/python-backend.ts')).createPythonBackend({
          settings: pythonSettings,
          log,
          inference: options.inference,
          ...(options.env ? { env: options.env } : {}),
          protectedEnvNames: options.protectedEnvNames ?? [],
          ...(options.metrics ? { metrics: options.metrics } : {}),
          ...(options.logLevels ? { logLevels: options.logLevels } : {}),
        }),
      ),
    ],
    ['llm', createLlmBackend(options.chatPort ?? (() => undefined))],
  ]);
}

/** The variables herd.yaml reads secrets from: no model may pass them to its processes. */
function listSecretEnvNames(config: HerdConfig): string[] {
  const names = [config.auth.master_key_env, ...Object.values(config.providers).flatMap((p) => (p.api_key_env ? [p.api_key_env] : []))];
  if (config.serving.cache?.redis?.password_env) names.push(config.serving.cache.redis.password_env);
  // The collector's headers (a token) are secrets too.
  names.push('OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', ...(config.tracing.headers_env ? [config.tracing.headers_env] : []));
  return names;
}

export async function startHerd(config: HerdConfig, options: StartOptions = {}): Promise<HerdServer> {
  // Every component logs through one sink that keeps each record on lines of its own (escape-log-text.ts).
  const log = options.log ? createSafeLog(options.log) : () => undefined;
  const env = options.env ?? process.env;
  const registry = createMetricsRegistry();
  const tracing = createTracing(mergeTritonTraceConfig(config.tracing, config.serving.trace), { env, log, metrics: () => registerTracingMetrics(registry) });
  // Python models call back into inference (BLS) and llm models into the gateway, which starts after serving.
  let chatPort: ChatPort | undefined;
  // One store each for HTTP and gRPC: a setting made over one transport is answered over the other (and Python models' Logger obeys it).
  const logSettings = new LogSettings();
  if (config.server.log_verbose > 0) logSettings.update({ log_verbose_level: config.server.log_verbose });
  const modelHooks = { metrics: new CustomMetricRegistry(registry), logLevels: () => logSettings.get() };
  const { repository, inference, responseCache, loadSeconds } = await startServing(config, env, log, () => chatPort, modelHooks);

  // The gateway exists when herd.yaml names models: a serving-only deployment opens no key store.
  // type: triton deployments without base_url run this repository's models in process, through this port.
  const inferencePort = createServingInferencePort(inference);
  const gateway = Object.keys(config.models).length > 0 ? await startGateway(config, env, log, registry, inferencePort, tracing) : undefined;
  if (gateway) {
    chatPort = createServingChatPort({ flow: gateway.flow, authenticator: gateway.auth.authenticator, identity: config.serving.identity, env });
  }

  const [httpGuard, grpcGuard] = [createTransportApiGuard(config, env, 'http'), createTransportApiGuard(config, env, 'grpc')];

  // Draining (SIGTERM) and closing both answer not-ready and close each answered connection.
  let exiting = false;
  const sharedMemory = new SystemSharedMemoryRegistry();
  // One store each for HTTP and gRPC: a setting made over one transport is answered over the other.
  const traceSettings = new TraceSettings(config.serving.trace, { env, log });
  const isReady = () => !exiting && (!config.serving.strict_readiness || repository.allReady());
  // What both transports serve from; the tracer traces the inferences Triton's trace settings sample.
  const transportDeps = { inference, repository, sharedMemory, traceSettings, tracer: tracing.tracer, logSettings, isReady, serverId: config.server.id, callers: chatPort };
  const http: FastifyInstance = createHttpApp(
    { ...transportDeps, isExiting: () => exiting },
    {
      maxInputSize: config.server.http_max_input_size,
      streams: { idleReaderMs: config.server.stream_idle_reader_ms, maxBufferedBytes: config.server.stream_max_buffered_bytes },
      log,
      apiGuard: httpGuard,
      trustedProxies: config.server.trusted_proxies,
      limits: config.server.limits,
      ...(gateway
        ? gatewayRoutesOf(gateway, config, log, { repository, inference, isReady, apiGuard: httpGuard }, options.configSources ?? describeConfigSources({ config }))
        : {}),
      ...(config.server.ui.enabled ? { console: consoleOptionsOf(config, gateway, options.consoleRoot) } : {}),
    },
  );
  registerInferenceMetrics(registry, createServingStatsSource(repository, loadSeconds), { cache: responseCache !== undefined });
  registerCancelledMetrics(registry, createServingStatsSource(repository, loadSeconds));
  let metrics: Awaited<ReturnType<typeof startMetricsServer>>;
  let address: string;
  let grpc: RunningGrpcServer | undefined;
  try {
    // --allow-http=false (KServe's Triton runtime can pass it): gRPC and metrics only; serve-command refuses it with a gateway.
    address = config.server.allow_http ? await http.listen({ host: config.server.http_address ?? config.server.host, port: config.server.http_port }) : '';
    if (config.server.allow_grpc) {
      grpc = await startGrpcServer(
        { ...transportDeps, log, apiGuard: grpcGuard },
        { host: config.server.grpc_address ?? config.server.host, port: config.server.grpc_port, keepalive: config.server.grpc_keepalive },
      );
    }
    metrics = await startMetricsServer({
      registry,
      host: config.server.metrics_address ?? config.server.host,
      port: config.server.metrics_port,
      log,
      limits: config.server.limits,
    });
  } catch (err) {
    for (const step of [() => grpc?.close(), () => http.close(), () => sharedMemory.close(), () => repository.close(), () => gateway?.close(), () => responseCache?.close()])
      await step();
    await tracing.close();
    throw err;
  }
  const httpUrl = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '[::1]');

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      exiting = true;
      await Promise.all([http.close(), grpc?.close()]);
      sharedMemory.close();
      await repository.close();
      traceSettings.close();
      await responseCache?.close();
      await gateway?.close();
      await metrics.close();
      await tracing.close();
    })();
    return closed;
  };
  const grpcUrl = grpc?.address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '[::1]');
  const beginDrain = () => (exiting = true);
  const flushLedger = async () => gateway?.ledger?.flush();
  const gatewayWarning = gateway?.auth.openWarning;
  return { httpUrl, grpcUrl, metricsUrl: metrics.url, repository, tracing, gateway: gateway?.flow, gatewayWarning, isReady, beginDrain, flushLedger, close };
}

interface StartedServing {
  repository: ModelRepositoryManager;
  inference: InferenceService;
  responseCache: Awaited<ReturnType<typeof createInferenceResponseCache>>;
  /** How long each loaded version took to load (the load-time metric). */
  loadSeconds: WeakMap<LoadedModel, number>;
}

/** The serving side: response cache, repository (models loaded, polling started) and the inference service. */
async function startServing(
  config: HerdConfig,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  chatPort: () => ChatPort | undefined,
  modelHooks: Pick<BackendOptions, 'metrics' | 'logLevels'>,
): Promise<StartedServing> {
  const loadSeconds = new WeakMap<LoadedModel, number>();
  const responseCache = await createInferenceResponseCache({ config: config.serving.cache, env, log });
  // Python models call back into inference (BLS); the service exists once the repository does.
  let inference: InferenceService | undefined;
  const repository: ModelRepositoryManager = new ModelRepositoryManager({
    hasResponseCache: responseCache !== undefined,
    repositories: config.serving.model_repository,
    controlMode: config.serving.model_control_mode,
    backends: createBackends({
      backendConfig: config.serving.backend_config,
      log,
      inference: () => inference,
      chatPort,
      env,
      protectedEnvNames: listSecretEnvNames(config),
      ...modelHooks,
    }),
    rateLimiter: config.serving.rate_limit === 'execution_count' ? new RateLimiter(new Map(Object.entries(config.serving.rate_limit_resources))) : undefined,
    onLoaded: (model, seconds) => loadSeconds.set(model, seconds),
    // Ensemble steps take the same inference path as a client's request (called only once loading starts).
    runEnsembleStep: (call) => (inference as InferenceService).infer(call),
    streamEnsembleStep: (call, signal) => (inference as InferenceService).streamInfer(call, signal),
    onWarning: (message) => log(`warning: ${message}`),
    allowFilesOutsideModelDir: config.serving.allow_files_outside_model_dir,
  });
  inference = new InferenceService(repository, responseCache);
  try {
    await repository.start(config.serving.load_model);
  } catch (err) {
    await responseCache?.close();
    throw err;
  }
  if (config.serving.model_control_mode === 'poll') repository.startPolling(config.serving.repository_poll_secs);
  return { repository, inference, responseCache, loadSeconds };
}

/** The web console (server.ui): its sessions live in the gateway's key store; a serving-only Herd serves the page but cannot sign in. */
function consoleOptionsOf(config: HerdConfig, gateway: RunningGateway | undefined, staticRoot: string | undefined): ConsoleOptions {
  const server = {
    version: HERD_VERSION,
    currency: gateway?.ledger ? config.billing.currency : null,
    gateway: gateway !== undefined,
    serving: config.serving.model_repository.length > 0,
    model_control_mode: config.serving.model_control_mode,
  };
  // A signed-out (or expired) session's live tails close with it, on this replica.
  gateway?.auth.sessions.onEnd((session) => closeTailsOf(session.handle));
  return {
    ui: config.server.ui,
    staticRoot,
    auth: gateway ? new ConsoleSessionAuth(gateway.auth.sessions, gateway.auth.authenticator) : undefined,
    audit: gateway?.admin.audit,
    server: () => server,
  };
}

/** Triton's API groups on one transport: the master key guards the ones that change the server (docs/security.md). */
function createTransportApiGuard(config: HerdConfig, env: NodeJS.ProcessEnv, transport: 'http' | 'grpc') {
  const masterKeySet = Boolean(env[config.auth.master_key_env]);
  const flags = transport === 'http' ? config.server.http_restricted_api : config.server.grpc_restricted_protocol;
  return createApiGroupGuard(resolveApiGroupRules({ configured: config.server.restricted_api, flags, transport, masterKeySet }), env[config.auth.master_key_env]);
}
