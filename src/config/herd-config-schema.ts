// The herd.yaml schema (zod): field names are the contract docs/configuration.md documents. Sections arrive as
// their features do; an unknown key is an error so a typo never silently does nothing.
import { z } from 'zod';
import { batchConfigSchema, checkBatchConfig } from './batch-config-schema.ts';
import { billingConfigSchema, checkBillingConfig } from './billing-config-schema.ts';
import { cacheConfigShape } from './cache-config-schema.ts';
import { servingCacheSchema } from './serving-cache-config-schema.ts';
import { servingTraceSchema } from './serving-trace-config-schema.ts';
import { checkLimitsConfig, limitsConfigShape } from './limits-config-schema.ts';
import { checkGatewayConfig, gatewayConfigShape } from './gateway-config-schema.ts';
import { serverLimitsSchema, trustedProxiesSchema } from './server-limits-config-schema.ts';
import { tracingConfigSchema } from './tracing-config-schema.ts';
import { uiConfigSchema } from './ui-config-schema.ts';

const port = z.number().int().min(0).max(65535);

export const serverSchema = z.strictObject({
  id: z.string().min(1).default('triton').describe("server id in GET /v2 (tritonserver --id); Triton's client examples expect 'triton'"),
  host: z.string().default('0.0.0.0').describe('address the HTTP and metrics ports listen on'),
  http_port: port.default(8000).describe('KServe v2 HTTP and the OpenAI-compatible /v1 gateway'),
  grpc_port: port.default(8001).describe('KServe v2 gRPC port (tritonserver --grpc-port)'),
  grpc_address: z.string().min(1).optional().describe('address the gRPC service listens on (tritonserver --grpc-address); `host` when unset'),
  allow_grpc: z.boolean().default(true).describe('tritonserver --allow-grpc: false serves no gRPC'),
  allow_http: z
    .boolean()
    .default(true)
    .describe('tritonserver --allow-http: false opens no HTTP port (KServe HTTP and the /v1 gateway); refused when herd.yaml configures gateway models'),
  log_verbose: z
    .number()
    .int()
    .min(0)
    .default(0)
    .describe("tritonserver --log-verbose: the level /v2/logging and LogSettings report at start (Herd's own lines do not change with it)"),
  grpc_infer_allocation_pool_size: z.number().int().min(0).default(8).describe('tritonserver --grpc-infer-allocation-pool-size: accepted; Herd keeps no pool of response objects'),
  grpc_keepalive: z
    .strictObject({
      time_ms: z.number().int().min(0).default(7_200_000).describe('--grpc-keepalive-time: ms between keepalive pings'),
      timeout_ms: z.number().int().min(0).default(20_000).describe('--grpc-keepalive-timeout: ms to wait for a ping answer'),
      permit_without_calls: z.boolean().default(false).describe('--grpc-keepalive-permit-without-calls'),
      http2_max_pings_without_data: z.number().int().min(0).default(2).describe('--grpc-http2-max-pings-without-data'),
      http2_min_recv_ping_interval_without_data_ms: z.number().int().min(0).default(300_000).describe('--grpc-http2-min-recv-ping-interval-without-data (accepted; not enforced)'),
      http2_max_ping_strikes: z.number().int().min(0).default(2).describe('--grpc-http2-max-ping-strikes (accepted; not enforced)'),
    })
    .prefault({})
    .describe("tritonserver's --grpc-keepalive-* and --grpc-http2-* settings, with its defaults"),
  metrics_port: port.default(8002).describe('Prometheus metrics (/metrics)'),
  http_max_input_size: z
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024)
    .describe('largest request body accepted, in bytes, after decompression (tritonserver --http-max-input-size)'),
  stream_idle_reader_ms: z
    .number()
    .int()
    .positive()
    .default(30_000)
    .describe(
      "a streamed answer's client that has not read for this long (its socket buffer full) is dropped, the upstream cancelled and the ledger row written for what was delivered",
    ),
  stream_max_buffered_bytes: z
    .number()
    .int()
    .positive()
    .default(8 * 1024 * 1024)
    .describe('bytes one streamed answer may hold queued for its client (Herd and socket buffers) before the stream is dropped as above'),
  exit_timeout_secs: z
    .number()
    .int()
    .min(0)
    .default(30)
    .describe('on SIGINT/SIGTERM, seconds from the signal until Herd exits even with requests still running, the drain grace included (tritonserver --exit-timeout-secs)'),
  drain_grace_secs: z
    .number()
    .min(0)
    .default(5)
    .describe(
      'on SIGTERM, seconds Herd keeps accepting and answering (every answer with Connection: close) while /v2/health/ready answers 503, so balancers notice before the listeners close (--drain-grace-secs); 0: close at once',
    ),
  http_address: z.string().min(1).optional().describe('address the HTTP port listens on (tritonserver --http-address); `host` when unset'),
  metrics_address: z
    .string()
    .min(1)
    .optional()
    .describe('address the metrics port listens on (tritonserver --metrics-address), e.g. 127.0.0.1 for a private /metrics; `host` when unset'),
  restricted_api: z
    .record(z.string(), z.string().min(1))
    .default({})
    .describe(
      "who may call each of Triton's API groups (health, metadata, inference, shared-memory, model-config, model-repository, statistics, trace, logging) over HTTP and gRPC: master (the master key), open, or <header>=<value> (Triton's restricted-API header; over gRPC the metadata key is triton-grpc-protocol-<header>). With a master key set, model-repository, shared-memory, trace and logging default to master",
    ),
  http_restricted_api: z
    .array(z.string())
    .default([])
    .describe('tritonserver --http-restricted-api=<groups>:<header>=<value>: HTTP requests to those groups need that header (403 otherwise)'),
  grpc_restricted_protocol: z
    .array(z.string())
    .default([])
    .describe('tritonserver --grpc-restricted-protocol=<groups>:<key>=<value>: gRPC calls to those groups need metadata triton-grpc-protocol-<key> (UNAVAILABLE otherwise)'),
  trusted_proxies: trustedProxiesSchema,
  limits: serverLimitsSchema,
  ui: uiConfigSchema,
});

const amount = z.union([z.string(), z.number()]).transform(String);

/** `serving.identity`: a plain name (every model, no limits) or a principal with a key's allowed models, limits and budget. */
export interface ServingIdentity {
  name: string;
  models: '*' | string[];
  rpm?: number | undefined;
  tpm?: number | undefined;
  max_concurrency?: number | undefined;
  budget_day?: string | undefined;
  budget_month?: string | undefined;
}

const servingIdentitySchema = z.union([
  z
    .string()
    .min(1)
    .transform((name): ServingIdentity => ({ name, models: '*' })),
  z.strictObject({
    name: z.string().min(1).describe('the ledger key_name'),
    models: z.union([z.literal('*'), z.array(z.string().min(1))]).describe("gateway models it may call, or '*'"),
    rpm: z.number().int().positive().optional(),
    tpm: z.number().int().positive().optional(),
    max_concurrency: z.number().int().positive().optional(),
    budget_day: amount.optional().describe('spend per UTC day, settlement currency'),
    budget_month: amount.optional().describe('spend per UTC month, settlement currency'),
  }),
]);

export const servingSchema = z.strictObject({
  model_repository: z.array(z.string()).default([]).describe('Triton model repositories (config.pbtxt plus numbered version folders), relative to herd.yaml'),
  model_control_mode: z
    .enum(['none', 'poll', 'explicit'])
    .default('none')
    .describe("Triton's model control modes: load everything at start, rescan the repository, or load on request"),
  load_model: z.array(z.string()).default([]).describe("explicit mode: models to load at start ('*' for all)"),
  repository_poll_secs: z.number().min(0).default(15).describe('poll mode: seconds between repository scans'),
  strict_readiness: z.boolean().default(true).describe('/v2/health/ready answers 200 only when every model is ready'),
  rate_limit: z
    .enum(['off', 'execution_count'])
    .default('off')
    .describe("Triton's --rate-limit: off, or execution_count (instances hold their rate_limiter resources while executing)"),
  rate_limit_resources: z
    .record(z.string(), z.number().int().positive())
    .default({})
    .describe('pool sizes for rate_limit execution_count; resources not listed size themselves from the models'),
  cache: servingCacheSchema.optional().describe("Triton's --cache-config: the server-wide response cache of models with response_cache enabled"),
  trace: servingTraceSchema.prefault({}),
  backend_config: z
    .record(z.string(), z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)))
    .default({})
    .describe("Triton's --backend-config=<backend>,<key>=<value>: per backend, its settings (e.g. python: { python-executable: /usr/bin/python3 })"),
  allow_files_outside_model_dir: z
    .boolean()
    .default(false)
    .describe(
      "let model configs on disk name files outside their model's folder (default_model_filename, label_filename, warmup input_data_file, EXECUTION_ENV_PATH, symlinks that lead out); a load-API config override never may",
    ),
  identity: servingIdentitySchema
    .optional()
    .describe(
      "who a keyless request to an llm model (or an ensemble with one) pays as: a principal like any key, with its allowed models, limits and budget (a plain name: every model, no limits). Unset: such a request needs the caller's key (or the model's gateway_key_env), except in open mode from this machine",
    ),
});

export const herdConfigSchema = z
  .strictObject({
    server: serverSchema.default(serverSchema.parse({})).describe('Listening addresses, request size, shutdown, proxies and connection limits.'),
    serving: servingSchema.default(servingSchema.parse({})).describe('The Triton-compatible side: where models come from and how they are loaded.'),
    ...gatewayConfigShape,
    ...cacheConfigShape,
    ...limitsConfigShape,
    billing: billingConfigSchema.prefault({}).describe('Settlement currency, exchange rates, the ledger and dated prices.'),
    batch: batchConfigSchema,
    tracing: tracingConfigSchema.prefault({}).describe('OpenTelemetry traces exported by OTLP/HTTP (docs/observability.md): off unless enabled here or by the OTEL_* variables.'),
  })
  .superRefine((config, ctx) => {
    checkGatewayConfig(config, ctx);
    checkBillingConfig(config, ctx);
    checkLimitsConfig(config, ctx);
    checkBatchConfig(config, ctx);
  });

export type HerdConfig = z.infer<typeof herdConfigSchema>;
export type ServerConfig = HerdConfig['server'];
export type ServingConfig = HerdConfig['serving'];
