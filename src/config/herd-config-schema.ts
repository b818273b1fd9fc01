// The herd.yaml schema (zod): field names are the contract from DESIGN.md. Sections arrive as
// their features do; an unknown key is an error so a typo never silently does nothing.
import { z } from 'zod';
import { billingConfigSchema, checkBillingConfig } from './billing-config-schema.ts';
import { cacheConfigShape } from './cache-config-schema.ts';
import { checkLimitsConfig, limitsConfigShape } from './limits-config-schema.ts';
import { checkGatewayConfig, gatewayConfigShape } from './gateway-config-schema.ts';

const port = z.number().int().min(0).max(65535);

export const serverSchema = z.strictObject({
  /** Server id in GET /v2 (tritonserver --id); Triton's client examples expect 'triton'. */
  id: z.string().min(1).default('triton'),
  host: z.string().default('0.0.0.0'),
  http_port: port.default(8000),
  grpc_port: port.default(8001),
  metrics_port: port.default(8002),
  /** Largest request body accepted, in bytes, after decompression (tritonserver --http-max-input-size). */
  http_max_input_size: z.number().int().positive().default(64 * 1024 * 1024),
  /** Seconds to wait for in-flight requests on SIGINT/SIGTERM (tritonserver --exit-timeout-secs). */
  exit_timeout_secs: z.number().int().min(0).default(30),
});

export const servingSchema = z.strictObject({
  model_repository: z.array(z.string()).default([]),
  model_control_mode: z.enum(['none', 'poll', 'explicit']).default('none'),
  load_model: z.array(z.string()).default([]),
  repository_poll_secs: z.number().min(0).default(15),
  strict_readiness: z.boolean().default(true),
  /** Triton's --rate-limit: off, or execution_count (instances hold their rate_limiter resources while executing). */
  rate_limit: z.enum(['off', 'execution_count']).default('off'),
  /** Pool sizes for --rate-limit execution_count; resources not listed size themselves from the models. */
  rate_limit_resources: z.record(z.string(), z.number().int().positive()).default({}),
  /** The principal llm models call the gateway as when their config names no gateway key (ledger key_name). */
  identity: z.string().min(1).default('triton-serving'),
});

export const herdConfigSchema = z.strictObject({
  server: serverSchema.default(serverSchema.parse({})),
  serving: servingSchema.default(servingSchema.parse({})),
  ...gatewayConfigShape,
  ...cacheConfigShape,
  ...limitsConfigShape,
  billing: billingConfigSchema.prefault({}),
}).superRefine((config, ctx) => {
  checkGatewayConfig(config, ctx);
  checkBillingConfig(config, ctx);
  checkLimitsConfig(config, ctx);
});

export type HerdConfig = z.infer<typeof herdConfigSchema>;
export type ServerConfig = HerdConfig['server'];
export type ServingConfig = HerdConfig['serving'];
