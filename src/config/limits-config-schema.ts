// herd.yaml's `limits` section: where limits are counted (this process, or Redis shared by every
// replica) and priority admission per upstream model (slots, queue length, queue timeout, aging).
// Per-key limits live on the keys (herd keys create); per-provider ones in providers.*.limits.
import { z } from 'zod';

const positiveInt = z.number().int().positive();

export const limitsRedisSchema = z.strictObject({
  url: z
    .string()
    .regex(/^rediss?:\/\/.+/, 'must be a redis:// or rediss:// URL')
    .describe('redis:// or rediss:// URL'),
  key_prefix: z.string().default('herd:limits:').describe('prefix of every limit key'),
  timeout_ms: positiveInt.default(250).describe('longest wait for one Redis command before on_error applies'),
  // Limits protect the gateway; they should not take it down with Redis.
  on_error: z
    .enum(['fail_open', 'fail_closed', 'allow', 'deny'])
    .default('fail_open')
    .describe(
      'while Redis cannot answer (down, unreachable, slower than timeout_ms): fail_open lets requests through unchecked (logged, counted in herd_gateway_limit_store_unavailable_total); fail_closed answers 503 UNAVAILABLE; allow and deny are older names for them',
    ),
  lease_ms: positiveInt.default(30_000).describe('a concurrency slot of a replica that died is freed after this long (live holders renew theirs)'),
  poll_ms: positiveInt.default(50).describe('how often a queued request re-checks for slots freed by other replicas'),
});

/** Admission settings one upstream model may override. */
const admissionOverrideSchema = z.strictObject({
  concurrency: positiveInt.optional().describe('overrides admission.concurrency'),
  queue_timeout_ms: positiveInt.optional().describe('overrides admission.queue_timeout_ms'),
  aging_ms: positiveInt.optional().describe('overrides admission.aging_ms'),
  max_queue: positiveInt.optional().describe('overrides admission.max_queue'),
});

// provider/upstream_model, as in x-herd-provider and the breaker keys.
const deploymentKey = z.string().regex(/^[^/\s]+\/\S+$/, 'must be provider/upstream_model');

export const admissionSchema = z.strictObject({
  concurrency: positiveInt.default(64).describe('upstream calls in flight per upstream model (provider/upstream_model), across all replicas when Redis is set'),
  queue_timeout_ms: positiveInt.default(30_000).describe("longest wait in an admission queue before 503 + Retry-After (the request's deadline may cut it shorter)"),
  aging_ms: positiveInt.default(10_000).describe('a waiter climbs one priority class per aging_ms waited, so BATCH is served within 2 × aging_ms of a HIGH stream'),
  max_queue: positiveInt.default(1000).describe('waiters per queue; when full, a newcomer ranked higher than the last waiter takes its place'),
  // zod reports a bad record key as "Invalid key in record"; say what a key must look like instead.
  models: z
    .record(deploymentKey, admissionOverrideSchema, { error: (issue) => (issue.code === 'invalid_key' ? 'must be provider/upstream_model' : undefined) })
    .default({})
    .describe('per upstream model, keyed provider/upstream_model: e.g. holysheep/gpt-4.1: { concurrency: 8 }'),
});

export const limitsConfigSchema = z.strictObject({
  redis: limitsRedisSchema.optional().describe('count per-key limits and admission slots in Redis, shared by every replica; absent: in this process only'),
  admission: admissionSchema.prefault({}).describe('priority admission (HIGH, NORMAL, BATCH) per upstream model'),
});

/** Spread into herdConfigSchema, as gatewayConfigShape is. */
export const limitsConfigShape = {
  limits: limitsConfigSchema
    .prefault({})
    .describe('Where limits are counted, and priority admission. Per-key limits live on the keys (herd keys create); per-provider ones in providers.<name>.limits.'),
};

export type LimitsConfig = z.infer<typeof limitsConfigSchema>;
export type LimitsRedisConfig = z.infer<typeof limitsRedisSchema>;
export type AdmissionConfig = z.infer<typeof admissionSchema>;
export type AdmissionOverride = z.infer<typeof admissionOverrideSchema>;

interface IssueSink {
  addIssue(issue: { code: 'custom'; path: (string | number)[]; message: string }): void;
}

interface ModelsForCheck {
  models: Record<string, { deployments: { provider: string; upstream_model?: string | undefined }[] }>;
}

/** Call from herdConfigSchema's superRefine: an override must name a configured deployment, or it would silently do nothing. */
export function checkLimitsConfig(config: { limits: LimitsConfig } & ModelsForCheck, ctx: IssueSink): void {
  const known = new Set<string>();
  for (const [name, model] of Object.entries(config.models)) {
    for (const d of model.deployments) known.add(`${d.provider}/${d.upstream_model ?? name}`);
  }
  for (const key of Object.keys(config.limits.admission.models)) {
    if (known.has(key)) continue;
    const hint = known.size > 0 ? `: known upstream models are ${[...known].sort().join(', ')}` : '';
    ctx.addIssue({ code: 'custom', path: ['limits', 'admission', 'models', key], message: `no deployment is ${key}${hint}` });
  }
}
