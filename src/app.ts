// The composition root: builds the serving side from a HerdConfig, wires it to the HTTP transport,
// and owns start-up and the draining shutdown. Nothing else constructs concrete pieces.
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { HerdConfig } from './config/herd-config-schema.ts';
import { BillingService } from './gateway/billing/billing-service.ts';
import type { Ledger } from './gateway/billing/ledger.ts';
import { openLedger } from './gateway/billing/open-ledger.ts';
import { createResponseCache } from './gateway/cache/create-response-cache.ts';
import type { ResponseCache } from './gateway/cache/response-cache.ts';
import { ChatGateway } from './gateway/chat-gateway.ts';
import { createChatService, type ChatService } from './gateway/chat-service.ts';
import { createGatewayAuth, type GatewayAuth } from './gateway/keys/create-gateway-auth.ts';
import { createGatewayLimits, type GatewayLimits } from './gateway/limits/create-gateway-limits.ts';
import { createServingStatsSource } from './http/convert-model-statistics-to-snapshot.ts';
import { createHttpApp } from './http/create-http-app.ts';
import { mapErrorToOpenAI } from './http/map-openai-error.ts';
import { startMetricsServer } from './http/metrics-server.ts';
import { createMetricsRegistry } from './metrics/create-metrics-registry.ts';
import { registerGatewayRequestMetrics, registerGatewayStateMetrics } from './metrics/gateway-metrics.ts';
import { registerInferenceMetrics } from './metrics/inference-metrics.ts';
import type { BackendFactory } from './serving/backends/backend.ts';
import { jsBackend } from './serving/backends/js/js-backend.ts';
import { createLazyBackend } from './serving/backends/lazy-backend.ts';
import { InferenceService } from './serving/inference-service.ts';
import { ModelRepositoryManager, type LoadedModel } from './serving/repository/model-repository-manager.ts';
import { RateLimiter } from './serving/scheduler/rate-limiter.ts';

export interface HerdServer {
  /** Base URL of the KServe HTTP endpoint, e.g. http://127.0.0.1:8000 */
  httpUrl: string;
  /** Base URL of the Prometheus endpoint (GET /metrics), e.g. http://127.0.0.1:8002 */
  metricsUrl: string;
  repository: ModelRepositoryManager;
  /** The LLM gateway, when herd.yaml configures models. */
  gateway: ChatService | undefined;
  /** Set when the gateway runs without authentication (the CLI prints it). */
  gatewayWarning: string | undefined;
  /** Stops accepting requests, answers every accepted one, unloads models. Idempotent. */
  close(): Promise<void>;
}

export interface StartOptions {
  log?: (line: string) => void;
  /** Where upstream API keys are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export function createBackends(): ReadonlyMap<string, BackendFactory> {
  return new Map<string, BackendFactory>([
    ['onnxruntime', createLazyBackend('onnxruntime', async () => (await import('./serving/backends/onnxruntime/onnxruntime-backend.ts')).onnxRuntimeBackend)],
    [jsBackend.name, jsBackend],
  ]);
}

export async function startHerd(config: HerdConfig, options: StartOptions = {}): Promise<HerdServer> {
  const log = options.log ?? (() => undefined);
  const loadSeconds = new WeakMap<LoadedModel, number>();
  const repository = new ModelRepositoryManager({
    repositories: config.serving.model_repository,
    controlMode: config.serving.model_control_mode,
    backends: createBackends(),
    rateLimiter: config.serving.rate_limit === 'execution_count'
      ? new RateLimiter(new Map(Object.entries(config.serving.rate_limit_resources)))
      : undefined,
    onLoaded: (model, seconds) => loadSeconds.set(model, seconds),
  });
  await repository.start(config.serving.load_model);
  if (config.serving.model_control_mode === 'poll') repository.startPolling(config.serving.repository_poll_secs);

  const registry = createMetricsRegistry();
  // The gateway exists when herd.yaml names models: a serving-only deployment opens no key store.
  const gateway = Object.keys(config.models).length > 0 ? await startGateway(config, options.env ?? process.env, log, registry) : undefined;

  let closing = false;
  const inference = new InferenceService(repository);
  const http: FastifyInstance = createHttpApp(
    {
      inference,
      repository,
      serverId: config.server.id,
      isReady: () => !closing && (!config.serving.strict_readiness || repository.allReady()),
    },
    {
      maxInputSize: config.server.http_max_input_size,
      log,
      ...(gateway ? {
        gateway: { gateway: gateway.flow, chat: gateway.chat, authenticator: gateway.auth.authenticator, log },
        ...(gateway.ledger ? { admin: { authenticator: gateway.auth.authenticator, ledger: gateway.ledger, masterKeyEnv: config.auth.master_key_env, log } } : {}),
      } : {}),
    },
  );
  registerInferenceMetrics(registry, createServingStatsSource(repository, loadSeconds));
  let metrics: Awaited<ReturnType<typeof startMetricsServer>>;
  let address: string;
  try {
    address = await http.listen({ host: config.server.host, port: config.server.http_port });
    metrics = await startMetricsServer({ registry, host: config.server.host, port: config.server.metrics_port, log });
  } catch (err) {
    await http.close();
    await repository.close();
    await gateway?.close();
    throw err;
  }
  const httpUrl = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '[::1]');

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      closing = true;
      await http.close();
      await repository.close();
      await gateway?.close();
      await metrics.close();
    })();
    return closed;
  };
  return { httpUrl, metricsUrl: metrics.url, repository, gateway: gateway?.chat, gatewayWarning: gateway?.auth.openWarning, close };
}

interface RunningGateway {
  chat: ChatService;
  flow: ChatGateway;
  auth: GatewayAuth;
  /** Undefined with `billing.ledger: off`. */
  ledger: Ledger | undefined;
  close(): Promise<void>;
}

/** Keys, limits, cache, ledger and the chat service, opened in order and closed in reverse; their metrics on `registry`. */
async function startGateway(config: HerdConfig, env: NodeJS.ProcessEnv, log: (line: string) => void, registry: Registry): Promise<RunningGateway> {
  const auth = createGatewayAuth(config.auth, env);
  let limits: GatewayLimits | undefined;
  let cache: ResponseCache | undefined;
  let ledger: Ledger | undefined;
  try {
    limits = await createGatewayLimits(config.limits, { onError: (err) => log(`limits: ${err.message}`) });
    await limits.ready(2000);
    cache = await createResponseCache({ config: config.cache, log });
    await cache.ready(2000);
    let billing: BillingService | undefined;
    if (config.billing.ledger !== 'off') {
      ledger = await openLedger(config.billing.ledger, { spool: true, flushIntervalMs: config.billing.flush_interval_ms, maxBatchRows: config.billing.flush_max_rows, onError: (err: unknown) => log(`ledger: ${err instanceof Error ? err.message : String(err)}`) });
      billing = new BillingService({ config, ledger });
      await billing.recover();
    } else {
      log('billing.ledger is off: requests are not priced or recorded, and key budgets are not enforced');
    }
    const chat = createChatService({ config, env, admission: limits.admission });
    const observer = registerGatewayRequestMetrics({ registry, models: Object.keys(config.models), providers: Object.keys(config.providers) });
    const flow = new ChatGateway({
      chat, cache: { store: cache, policy: config.cache }, billing, keyLimits: limits.keys, log,
      observer, errorStatus: (error) => mapErrorToOpenAI(error).status,
    });
    const opened = { limits, cache, ledger };
    const admission = limits.admission;
    registerGatewayStateMetrics(registry, {
      cache: () => opened.cache.stats,
      modelQueues: () => admission.stats().models,
      providerQueues: () => admission.stats().providers,
      breakers: () => chat.health().breakers,
    });
    return {
      chat, flow, auth, ledger,
      async close() {
        await chat.close();
        await opened.cache.close();
        await opened.ledger?.close();
        await opened.limits.close();
        auth.close();
      },
    };
  } catch (err) {
    await cache?.close();
    await ledger?.close();
    await limits?.close();
    auth.close();
    throw err;
  }
}
