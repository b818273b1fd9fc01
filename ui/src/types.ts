// The JSON shapes the console reads, as the console contract (issue 30) and the admin API define them.
// Money is integer micros of the currency named beside it.

export type Role = 'admin' | 'viewer' | 'manager' | 'client';

export interface SessionJson {
  actor: { id: string; name: string; role: Role; team_id?: string | null };
  csrf_token: string;
  expires_at: number;
  server: { version: string; currency: string | null; gateway: boolean; serving: boolean; model_control_mode: 'none' | 'poll' | 'explicit' };
}

export interface Totals {
  requests: number;
  cost_micros: number;
  usd_micros: number;
  list_usd_micros: number;
  saving_usd_micros: number;
}

export interface OverviewJson {
  ready: boolean;
  models: { ready: number; failed: number; total: number };
  traffic: {
    window_secs: number;
    requests_per_sec: number;
    errors_per_sec: number;
    p50_ms: number | null;
    p99_ms: number | null;
    series: { t: number; requests: number; errors: number }[];
  };
  serving: { inferences_per_sec: number };
  spend: { currency: string; today: Totals; month: Totals } | null;
  top_keys: { id: string; name: string | null; requests: number; cost_micros: number }[];
  top_models: { model: string; requests: number; cost_micros: number }[];
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface RequestJson {
  request_id: string;
  started_at: number;
  finished_at: number;
  key_id: string;
  key_name: string | null;
  team_id: string | null;
  team_name: string | null;
  dialect: string | null;
  origin: string | null;
  route: string | null;
  requested_model: string;
  model: string | null;
  provider: string | null;
  upstream_model: string | null;
  status: string;
  http_status: number | null;
  attempts: number;
  cache_hit: boolean;
  priority: string | null;
  latency_ms: number;
  ttft_ms: number | null;
  prompt_tokens: number;
  cached_prompt_tokens: number;
  cache_write_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  estimated: boolean;
  currency: string;
  cost_micros: number;
  usd_micros: number;
  list_usd_micros: number;
  saved_micros: number;
  trace_id: string | null;
}

export interface AttemptJson {
  attempt: number;
  model: string | null;
  provider: string | null;
  upstream_model: string | null;
  outcome: string;
  http_status: number | null;
  latency_ms: number;
  ttft_ms: number | null;
  started_at: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
  currency: string;
}

export interface SpendRowJson {
  group: string;
  name: string | null;
  currency: string;
  requests: number;
  failed: number;
  cache_hits: number;
  prompt_tokens: number;
  cached_prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  cost_micros: number;
  usd_micros: number;
  list_usd_micros: number;
  saved_micros: number;
}

export interface SpendJson {
  by: string;
  since: number;
  until: number;
  data: SpendRowJson[];
  next_cursor: string | null;
  total_groups: number;
}

export interface DeploymentJson {
  model: string;
  provider: string;
  upstream_model: string;
  kind: string;
  breaker: 'closed' | 'half_open' | 'open';
  healthy: boolean;
}

export interface RoutesJson {
  models: {
    name: string;
    kind?: string;
    aliases: string[];
    strategy?: string;
    fallbacks?: string[];
    available?: boolean;
    unavailable_reasons?: string[];
    deployments: { provider: string; upstream_model: string; weight?: number; enabled?: boolean }[];
  }[];
  tiers: Record<string, string>;
  patterns: { glob: string; model: string }[];
}

/** Nulls: in the repository but never loaded (no version, state, config). */
export interface ServingModelJson {
  name: string;
  version: string | null;
  state: string | null;
  reason: string | null;
  backend: string | null;
  instances: number | null;
  max_batch_size: number | null;
  dynamic_batching: boolean;
  config: unknown;
}

export interface Duration {
  count: number;
  ns: number;
}

export interface ServingStatJson {
  name: string;
  version: string;
  inference_count: number;
  execution_count: number;
  success: Duration;
  fail: Duration;
  queue: Duration;
  compute_input: Duration;
  compute_infer: Duration;
  compute_output: Duration;
  batch_stats: { batch_size: number; count: number }[];
}

export interface BudgetJson {
  period: 'day' | 'week' | 'month';
  amount_micros: number;
  amount: string;
  model: string | null;
}

export interface PolicyJson {
  allowed_models: '*' | string[];
  budgets: BudgetJson[];
  timezone: string;
  alert_thresholds: number[];
  rpm: number | null;
  tpm: number | null;
  max_concurrency: number | null;
}

export interface KeyJson extends PolicyJson {
  id: string;
  name: string;
  prefix: string;
  role: Role;
  team: { id: string; name: string } | null;
  state: 'active' | 'blocked' | 'expired' | 'revoked';
  priority: string | null;
  expires_at: string | null;
  blocked: boolean;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  spend?: { period: string; spent_micros: number; spent: string; limit_micros: number; limit: string; resets_at: string } | null;
}

export interface TeamJson extends PolicyJson {
  id: string;
  name: string;
  created_at: string;
}

export interface AuditJson {
  seq: number;
  at: string;
  actor_id: string;
  actor_name: string;
  action: string;
  object: string;
  before: unknown;
  after: unknown;
  count: number;
  request_id: string | null;
  source_ip: string | null;
}

export interface SettingsJson {
  config_file: string | null;
  entries: { path: string; value: unknown; source: string }[];
}

export interface TensorMeta {
  name: string;
  datatype: string;
  shape: number[];
}

export interface ModelMetadataJson {
  name: string;
  versions?: string[];
  platform?: string;
  inputs: TensorMeta[];
  outputs: TensorMeta[];
}

export type RequestDetailJson = Omit<RequestJson, 'attempts'> & { attempts: AttemptJson[] };
