// The web console's admin API shapes (overview, requests, spend, deployments, settings, serving) as zod
// schemas: the routes validate with them and the OpenAPI document is generated from them.
import { z } from 'zod';

const time = z.string().min(1).optional().describe('a duration back from now (7d, 24h, 30m), an ISO date or time, or epoch ms');
const cursor = z.string().min(1).optional().describe('next_cursor of the previous page');
const filters = {
  key: z.string().min(1).optional().describe("a key's public id"),
  model: z.string().min(1).optional().describe('the model that answered or the one the client asked for'),
  status: z.string().min(1).optional().describe('ok, error (every status but ok), or one exact status (cancelled, RATE_LIMITED, …)'),
  dialect: z.string().min(1).optional().describe('openai-chat, anthropic-messages, openai-responses, …'),
};
export const requestsQuery = z.strictObject({
  ...filters,
  since: time,
  until: time,
  limit: z.string().regex(/^\d+$/).optional().describe('page size, 1–500 (default 50)'),
  cursor,
});
export const tailQuery = z.strictObject(filters);
export const requestParams = z.strictObject({ id: z.string().min(1).max(200).describe("the request's id (x-request-id)") });
export const spendQuery = z.strictObject({
  by: z.enum(['day', 'key', 'team', 'model', 'provider']).optional().describe('default day'),
  since: time.describe('default 30d; the range spans at most 400 days'),
  until: time.describe('default now'),
  limit: z.string().regex(/^\d+$/).optional().describe('groups per page, 1–1000 (default 100)'),
  cursor,
});
export const spendCsvQuery = spendQuery.omit({ limit: true, cursor: true });
export const modelParams = z.strictObject({ name: z.string().min(1).describe('a model in the repository') });

const nullableString = z.string().nullable();
const money = z.int().describe('integer micros of the row’s currency');
export const requestJson = z.object({
  request_id: z.string(),
  started_at: z.number().describe('epoch ms'),
  finished_at: z.number(),
  key_id: z.string(),
  key_name: nullableString,
  team_id: nullableString,
  team_name: nullableString,
  dialect: z.string(),
  origin: nullableString,
  route: nullableString,
  requested_model: z.string(),
  model: nullableString,
  provider: nullableString,
  upstream_model: nullableString,
  status: z.string(),
  http_status: z.int().nullable(),
  attempts: z.int(),
  cache_hit: z.boolean(),
  priority: nullableString,
  latency_ms: z.number(),
  ttft_ms: z.number().nullable(),
  prompt_tokens: z.int(),
  cached_prompt_tokens: z.int(),
  cache_write_tokens: z.int(),
  completion_tokens: z.int(),
  reasoning_tokens: z.int(),
  estimated: z.boolean(),
  currency: z.string(),
  cost_micros: money,
  usd_micros: money,
  list_usd_micros: money,
  saved_micros: money,
  trace_id: z.string().nullable().describe('The W3C trace id of its spans when tracing was on (docs/observability.md)'),
});
export const attemptJson = z.object({
  attempt: z.int(),
  model: z.string(),
  provider: z.string(),
  upstream_model: z.string(),
  outcome: z.string(),
  http_status: z.int().nullable(),
  latency_ms: z.number(),
  ttft_ms: z.number().nullable(),
  started_at: z.number(),
  prompt_tokens: z.int(),
  completion_tokens: z.int(),
  cost_micros: money,
  currency: z.string(),
});
export const requestPageJson = z.object({ data: z.array(requestJson), next_cursor: z.string().nullable() });
export const requestDetailJson = requestJson.extend({ attempts: z.array(attemptJson).describe('in attempt order') });
export const tailStream = z
  .string()
  .describe('text/event-stream: `event: request` with a RequestJson per finished request, `: ping` every 15 s, `event: dropped` before closing a slow reader');

const totals = z.object({ requests: z.int(), cost_micros: money, usd_micros: money, list_usd_micros: money, saving_usd_micros: money });
export const overviewJson = z.object({
  ready: z.boolean(),
  models: z.object({ ready: z.int(), failed: z.int(), total: z.int() }),
  traffic: z.object({
    window_secs: z.int(),
    requests_per_sec: z.number(),
    errors_per_sec: z.number(),
    p50_ms: z.number().nullable(),
    p99_ms: z.number().nullable(),
    series: z.array(z.object({ t: z.int().describe('epoch s'), requests: z.int(), errors: z.int() })),
  }),
  serving: z.object({ inferences_per_sec: z.number() }),
  spend: z.object({ currency: z.string(), today: totals, month: totals }).nullable(),
  top_keys: z.array(z.object({ id: z.string(), name: nullableString, requests: z.int(), cost_micros: money })),
  top_models: z.array(z.object({ model: z.string(), requests: z.int(), cost_micros: money })),
});
export const spendRowJson = z.object({
  group: z.string(),
  name: nullableString,
  currency: z.string(),
  requests: z.int(),
  failed: z.int(),
  cache_hits: z.int(),
  prompt_tokens: z.int(),
  cached_prompt_tokens: z.int(),
  completion_tokens: z.int(),
  reasoning_tokens: z.int(),
  cost_micros: money,
  usd_micros: money,
  list_usd_micros: money,
  saved_micros: money,
});
export const spendJson = z.object({
  by: z.string(),
  since: z.number(),
  until: z.number(),
  data: z.array(spendRowJson),
  next_cursor: z.string().nullable(),
  total_groups: z.int(),
});
export const spendCsv = z.string().describe('text/csv: a header line, then the rows of the JSON (every page, 10,000 groups at most), money in decimal units');
export const deploymentsJson = z.object({
  data: z.array(
    z.object({
      model: z.string(),
      provider: z.string(),
      upstream_model: z.string(),
      kind: z.string(),
      breaker: z.enum(['closed', 'half_open', 'open']),
      healthy: z.boolean(),
    }),
  ),
});
export const settingsJson = z.object({
  config_file: nullableString,
  entries: z.array(z.object({ path: z.string(), value: z.unknown(), source: z.string() })),
});

const duration = z.object({ count: z.int(), ns: z.int() });
export const servingModelsJson = z.object({
  model_control_mode: z.enum(['none', 'poll', 'explicit']),
  data: z.array(
    z.object({
      name: z.string(),
      version: nullableString,
      state: nullableString.describe('READY, UNAVAILABLE, LOADING, UNLOADING; null: in the repository, never loaded'),
      reason: nullableString,
      backend: nullableString,
      instances: z.int().nullable(),
      max_batch_size: z.int().nullable(),
      dynamic_batching: z.boolean(),
      config: z.looseObject({}).nullable().describe('as GET /v2/models/{m}/config; null when no version is loaded'),
    }),
  ),
});
export const servingStatsJson = z.object({
  data: z.array(
    z.object({
      name: z.string(),
      version: z.string(),
      inference_count: z.int(),
      execution_count: z.int(),
      success: duration,
      fail: duration,
      queue: duration,
      compute_input: duration,
      compute_infer: duration,
      compute_output: duration,
      batch_stats: z.array(z.object({ batch_size: z.int(), count: z.int() })),
    }),
  ),
});
export const servingActionJson = z.object({ name: z.string(), action: z.enum(['load', 'unload']), state: nullableString });
