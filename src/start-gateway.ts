import type { Registry } from 'prom-client';
import type { HerdConfig } from './config/herd-config-schema.ts';
import { BillingService } from './gateway/billing/billing-service.ts';
import { type AdminParts, createAdminParts } from './gateway/admin/create-admin-parts.ts';
import type { Ledger } from './gateway/billing/ledger.ts';
import { ConsoleReads } from './gateway/admin/console-reads.ts';
import { RecentTraffic } from './gateway/billing/recent-traffic.ts';
import { publishingLedger, RequestFeed } from './gateway/billing/request-feed.ts';
import { createConsoleApi } from './http/admin-console-routes.ts';
import type { ServingAdminSource } from './http/console/serving-admin-routes.ts';
import type { ConfigSources } from './config/describe-config-sources.ts';
import { openLedger } from './gateway/billing/open-ledger.ts';
import { type BatchParts, openBatchParts } from './gateway/batch/open-batch-parts.ts';
import { type RunningBatch, startBatch } from './start-batch.ts';
import { startAlertSender } from './gateway/billing/start-alert-sender.ts';
import { createResponseCache } from './gateway/cache/create-response-cache.ts';
import type { ResponseCache } from './gateway/cache/response-cache.ts';
import { ChatGateway } from './gateway/flow/chat-gateway.ts';
import { describeLedgerHealth, type LedgerHealth } from './gateway/flow/describe-gateway.ts';
import { checkTritonDeployments } from './gateway/router/check-triton-deployments.ts';
import type { InferencePort } from './core/inference-port.ts';
import { createChatService, type ChatService } from './gateway/flow/chat-service.ts';
import { EmbeddingsGateway } from './gateway/flow/embeddings-gateway.ts';
import { createGatewayAuth, type GatewayAuth } from './gateway/keys/create-gateway-auth.ts';
import type { InFlightCount } from './http/gateway-exchange.ts';
import { createGatewayLimits, type GatewayLimits } from './gateway/limits/create-gateway-limits.ts';
import type { AffinityStore } from './gateway/router/cache-affinity.ts';
import { createAffinityStore } from './gateway/router/create-affinity-store.ts';
import type { Provider } from './gateway/providers/provider.ts';
import { mapErrorToAnthropic } from './http/map-anthropic-error.ts';
import { mapErrorToOpenAI } from './http/map-openai-error.ts';
import { registerGatewayRequestMetrics } from './metrics/gateway-metrics.ts';
import { registerGatewayStateMetrics } from './metrics/gateway-state-metrics.ts';
import { registerGenAiClientMetrics } from './metrics/genai-client-metrics.ts';
import { NO_FLOW_TRACING, type FlowTracing } from './gateway/flow/flow-tracing.ts';

export interface GatewayFlowParts {
  env: NodeJS.ProcessEnv;
  limits: GatewayLimits;
  cache: ResponseCache;
  /** Undefined with `billing.ledger: off`. */
  billing: BillingService | undefined;
  /** Where the request metrics go; undefined: none. */
  registry: Registry | undefined;
  log?: (line: string) => void;
  /** Provider instances by name instead of the configured upstreams (bench/gateway/flow-microbench.ts). */
  providers?: Readonly<Record<string, Provider>>;
  /** This Herd's models, for `type: triton` deployments without base_url. */
  inference?: InferencePort;
  /** false: no priority admission in front of the upstreams (the flow microbenchmark's variant). */
  admission?: boolean;
  /** Prompt-cache affinity's store (Redis when configured); absent: this process's memory, if routes.affinity is on. */
  affinity?: AffinityStore;
  /** Spans per exchange, operation and attempt (the tracer and tracing.capture_content); absent: none. */
  tracing?: FlowTracing;
}

/** The chat service and the gateway flows over the opened parts: `herd serve` and the flow microbenchmark build them here. */
export function createGatewayFlow(config: HerdConfig, parts: GatewayFlowParts): { chat: ChatService; flow: ChatGateway; embeddings: EmbeddingsGateway } {
  const { env, limits, cache, billing, registry, log } = parts;
  const chat = createChatService({
    ...(registry ? { meter: registerGenAiClientMetrics(registry) } : {}),
    config,
    env,
    admission: parts.admission === false ? undefined : limits.admission,
    ...(parts.providers ? { providers: parts.providers } : {}),
    ...(parts.inference ? { inference: parts.inference } : {}),
    ...(parts.affinity ? { affinity: parts.affinity } : {}),
  });
  const observer = registry ? registerGatewayRequestMetrics({ registry, models: Object.keys(config.models), providers: Object.keys(config.providers) }) : undefined;
  const flow = new ChatGateway({
    chat,
    cache: { store: cache, policy: config.cache },
    billing,
    keyLimits: limits.keys,
    log,
    observer,
    tracing: parts.tracing ?? NO_FLOW_TRACING,
    errorStatus: (error, dialect) => (dialect === 'anthropic-messages' ? mapErrorToAnthropic(error) : mapErrorToOpenAI(error)).status,
  });
  // Embeddings run through the same flow: the chat service's catalog, provider pools, breakers and load
  // figures, so /health shows embedding deployments' breakers beside the chat ones.
  const embeddings = new EmbeddingsGateway(flow);
  return { chat, flow, embeddings };
}

/** What the HTTP app needs of a running gateway: the /v1 routes' flow and the admin API's service, over one key store. */
export function gatewayRoutesOf(gateway: RunningGateway, config: HerdConfig, log: (line: string) => void, serving?: ServingAdminSource, settings?: ConfigSources) {
  return {
    gateway: {
      gateway: gateway.flow,
      embeddings: gateway.embeddings,
      authenticator: gateway.auth.authenticator,
      recordRefusal: gateway.admin.audit.record.bind(gateway.admin.audit),
      inFlight: gateway.inFlight,
      tracer: gateway.tracing.tracer,
      ...ledgerHealthOf(gateway.ledger, config),
      log,
    },
    ...(gateway.batch
      ? {
          files: { files: gateway.batch.files, authenticator: gateway.auth.authenticator, log },
          batches: { batches: gateway.batch.service, authenticator: gateway.auth.authenticator, log },
        }
      : {}),
    admin: {
      authenticator: gateway.auth.authenticator,
      ...gateway.admin,
      ledger: gateway.ledger,
      masterKeyEnv: config.auth.master_key_env,
      log,
      console: createConsoleApi(gateway.console, serving, settings),
    },
  };
}

function ledgerHealthOf(ledger: Ledger | undefined, config: HerdConfig): { ledgerHealth?: () => LedgerHealth } {
  if (!ledger) return {};
  return { ledgerHealth: () => describeLedgerHealth(ledger.kind, ledger.stats(), config.billing.flush_interval_ms) };
}

export interface RunningGateway {
  chat: ChatService;
  flow: ChatGateway;
  embeddings: EmbeddingsGateway;
  auth: GatewayAuth;
  admin: AdminParts;
  /** The web console's request feed (every recorded request, before the ledger's flush) and its reads. */
  console: { feed: RequestFeed; reads: ConsoleReads };
  /** Gateway exchanges running now (herd_gateway_requests_in_flight). */
  inFlight: InFlightCount;
  /** Undefined with `billing.ledger: off`. */
  ledger: Ledger | undefined;
  billing: BillingService | undefined;
  /** The batch store, the Files API's and the batch APIs' services; undefined without a ledger or with batch.enabled: false. */
  batch: RunningBatch | undefined;
  tracing: FlowTracing;
  close(): Promise<void>;
}

/** Keys, limits, cache, ledger and the chat service, opened in order and closed in reverse; their metrics on `registry`. */
export async function startGateway(
  config: HerdConfig,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  registry: Registry,
  inference: InferencePort,
  tracing: FlowTracing = NO_FLOW_TRACING,
): Promise<RunningGateway> {
  const auth = await createGatewayAuth(config.auth, env);
  let limits: GatewayLimits | undefined;
  let cache: ResponseCache | undefined;
  let ledger: Ledger | undefined;
  let affinity: AffinityStore | undefined;
  let batch: BatchParts | undefined;
  let running: RunningBatch | undefined;
  const feed = new RequestFeed({ onError: (err) => log(`request feed: ${err instanceof Error ? err.message : String(err)}`) });
  const traffic = new RecentTraffic();
  traffic.attach(feed);
  try {
    limits = await createGatewayLimits(config.limits, { onError: (err) => log(`limits: ${err.message}`) });
    await limits.ready(2000);
    cache = await createResponseCache({ config: config.cache, log });
    await cache.ready(2000);
    affinity = await createAffinityStore(config, { onError: (err) => log(`affinity: ${err.message}`) });
    await affinity?.ready?.(2000);
    let billing: BillingService | undefined;
    if (config.billing.ledger !== 'off') {
      ledger = await openLedger(config.billing.ledger, {
        spool: true,
        ...(config.billing.spool_dir !== undefined ? { spoolDir: config.billing.spool_dir } : {}),
        flushIntervalMs: config.billing.flush_interval_ms,
        maxBatchRows: config.billing.flush_max_rows,
        // Part of opening: a PostgreSQL ledger that cannot reach its database yet runs it when it does.
        recover: { olderThanMs: config.billing.stale_reservation_minutes * 60_000 },
        onError: (err: unknown) => log(`ledger: ${err instanceof Error ? err.message : String(err)}`),
        log: (line) => log(`ledger: ${line}`),
      });
      // The one place finished requests pass: the console's feed hears each before the ledger's batched flush.
      billing = new BillingService({ config, ledger: publishingLedger(ledger, feed) });
      // Budget alerts (#28): this process drains the ledger's outbox; the sender stops when the ledger closes.
      startAlertSender(ledger, config.billing, env, log);
      batch = await openBatchParts(config, { log });
    } else {
      log('billing.ledger is off: requests are not priced or recorded, and key budgets are not enforced');
    }
    const { chat, flow, embeddings } = createGatewayFlow(config, { env, limits, cache, billing, registry, log, inference, tracing, ...(affinity ? { affinity } : {}) });
    for (const warning of checkTritonDeployments(chat.catalog, inference)) log(`warning: ${warning}`);
    // Batch work, over the flow's catalog: the service the batch APIs answer through (the worker starts beside it).
    running =
      batch === undefined
        ? undefined
        : startBatch(config, batch, { catalog: chat.catalog, billing, flow, embeddings, authenticator: auth.authenticator, providers: chat.providers, log });
    // The admin API's service (/admin/v1, /v1/me) and its sign-in audit, over the same store, ledger and catalogue.
    const admin = createAdminParts({
      store: auth.store,
      ledger,
      catalog: chat.catalog,
      listModels: () => flow.listModels(),
      currency: config.billing.currency,
      defaultThresholds: config.billing.alerts.thresholds,
      log,
    });
    const reads = new ConsoleReads({ ledger, feed, traffic, currency: config.billing.currency, catalog: chat.catalog, breakers: () => chat.health().breakers });
    const opened = { limits, cache, ledger, affinity };
    const inFlight = { value: 0 };
    registerStateMetrics(registry, chat, opened, inFlight);
    return {
      chat,
      flow,
      embeddings,
      auth,
      admin,
      console: { feed, reads },
      inFlight,
      ledger,
      billing,
      batch: running,
      tracing,
      async close() {
        await admin.audit.close();
        // The worker first: its lines in flight finish through the flow and the ledger before those close.
        await (running ?? batch?.store)?.close();
        await chat.close();
        await embeddings.close();
        await opened.cache.close();
        await opened.affinity?.close();
        await opened.ledger?.close();
        await opened.limits.close();
        await auth.close();
      },
    };
  } catch (err) {
    await (running ?? batch?.store)?.close();
    await cache?.close();
    await affinity?.close();
    await ledger?.close();
    await limits?.close();
    await auth.close();
    throw err;
  }
}

/** The gateway's gauges (in flight, cache, queues, breakers, ledger, the limit store's outage) over the opened parts. */
function registerStateMetrics(
  registry: Registry,
  chat: ChatService,
  opened: { limits: GatewayLimits; cache: ResponseCache; ledger: Ledger | undefined },
  inFlight: InFlightCount,
): void {
  const { limits, ledger } = opened;
  const admission = limits.admission;
  registerGatewayStateMetrics(registry, {
    requestsInFlight: () => inFlight.value,
    cache: () => opened.cache.stats,
    modelQueues: () => admission.stats().models,
    providerQueues: () => admission.stats().providers,
    breakers: () => chat.health().breakers,
    ...(ledger ? { ledger: () => ledger.stats() } : {}),
    ...(limits.store.outage
      ? {
          limitsUnavailable: () => {
            const outage = limits.store.outage ?? { allowed: 0, refused: 0 };
            return [
              { mode: 'fail_open', count: outage.allowed },
              { mode: 'fail_closed', count: outage.refused },
            ];
          },
        }
      : {}),
  });
}
