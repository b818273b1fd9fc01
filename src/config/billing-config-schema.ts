// herd.yaml's `billing` section (zod): settlement currency, market exchange rates, where the ledger
// lives, how it batches, and dated price-catalog entries; plus the checks that need other sections.
import { z } from 'zod';
import type { GatewayConfig } from './gateway-config-schema.ts';

export const BILLING_CURRENCIES = ['CNY', 'USD'] as const;
export type BillingCurrency = (typeof BILLING_CURRENCIES)[number];

/** The market rate used when `fx.USD` is not set and settlement is CNY (the example in docs/money.md). */
export const DEFAULT_CNY_PER_USD = 7.3;

// Decimals may be written as numbers (7.3) or strings ("7.3"); both are read exactly, never as floats.
const DECIMAL_TEXT = /^\d+(?:\.\d+)?$/;
const decimal = z.union([z.number(), z.string().regex(DECIMAL_TEXT, 'must be a decimal number such as 7.3')]);
const nonNegativeDecimal = decimal.refine((v) => Number(v) >= 0 && Number.isFinite(Number(v)), 'must be zero or more');
const positiveDecimal = decimal.refine((v) => Number(v) > 0 && Number.isFinite(Number(v)), 'must be more than zero');

const LEDGER_LOCATION = /^(?:sqlite:.+|postgres(?:ql)?:\/\/.+|[^:]+)$/i;

/** `2026-05-01` (midnight UTC) or a full ISO 8601 time with its offset. */
const effectiveDate = z.string().refine((s) => parseEffectiveDate(s) !== undefined, {
  message: 'must be a date (2026-05-01, taken as 00:00 UTC) or an ISO 8601 time with an offset (2026-05-01T08:00:00+08:00)',
});

export const billingPriceSchema = z.strictObject({
  model: z.string().min(1).optional().describe('a model of models (name or alias); or match instead'),
  match: z
    .string()
    .regex(/^[^\s]+$/, 'must be a model-id glob without spaces')
    .optional()
    .describe(
      'instead of model: the id sent upstream (the client\'s own under upstream_model: "{model}"), as a glob (`*`, `?`) or one exact id; an exact id wins over globs, globs go in list order, and either wins over the model\'s own prices at the same provider level',
    ),
  provider: z.string().min(1).optional().describe("only for this provider's deployment of the model; absent: every provider without its own entry"),
  currency: z.enum(BILLING_CURRENCIES).default('USD').describe('currency the price is listed in'),
  input: nonNegativeDecimal.describe('per million prompt tokens'),
  output: nonNegativeDecimal.describe('per million completion tokens'),
  cached_input: nonNegativeDecimal.optional().describe("per million prompt tokens read from the upstream's cache; absent: 0.1 × input on anthropic providers, input elsewhere"),
  cache_write: nonNegativeDecimal.optional().describe('per million prompt tokens written to a cache for 5 minutes; absent: 1.25 × input on anthropic providers, input elsewhere'),
  cache_write_1h: nonNegativeDecimal
    .optional()
    .describe('per million prompt tokens written to a cache for 1 hour; absent: 2 × input on anthropic providers, cache_write elsewhere'),
  effective: effectiveDate.describe(
    'from when this price applies: 2026-05-01 (00:00 UTC) or an ISO 8601 time with its offset; a request is priced by the entry in force when it started',
  ),
  source: z.string().optional().describe('where the number comes from (a URL, "invoice 2026-04"): shown by reports and herd cost'),
});

/** Output tokens reserved for a request without max_tokens on a model without max_output_tokens (docs/keys-and-teams.md says why this figure). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 32_768;

export const alertsConfigSchema = z.strictObject({
  webhook_url: z
    .string()
    .url('must be an http(s) URL')
    .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL')
    .optional()
    .describe('where budget alerts are POSTed (JSON, Standard Webhooks headers); absent: alerts are still recorded in the ledger, not sent'),
  secret_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
    .optional()
    .describe('the environment variable holding the signing secret (whsec_<base64>, or any text): webhook-signature is its HMAC-SHA256 of id.timestamp.body'),
  thresholds: z
    .array(z.number().int().min(1).max(1000))
    .default([50, 80, 100])
    .describe("percent of a budget whose crossing (settled spend) sends one alert per period; a key's or team's own alert thresholds replace these"),
  max_attempts: z.number().int().min(1).max(100).default(8).describe('deliveries tried per alert (backoff 1 s doubling to 5 min) before it is marked failed'),
  timeout_ms: z.number().int().positive().default(10_000).describe('a delivery waits this long for the receiver to answer'),
  lease_ms: z
    .number()
    .int()
    .positive()
    .default(30_000)
    .describe('a replica sending an alert holds it this long; if it dies, another replica sends it after the lease (must exceed timeout_ms)'),
  poll_interval_ms: z.number().int().positive().default(1000).describe('how often each replica looks for alerts to send'),
});

export type AlertsConfig = z.infer<typeof alertsConfigSchema>;

export const billingConfigSchema = z.strictObject({
  currency: z.enum(BILLING_CURRENCIES).default('CNY').describe("the currency the team pays in: budgets and the ledger's cost column use it"),
  // What a provider charges per list-price dollar is its own exchange_rate, not this.
  fx: z
    .strictObject({
      USD: positiveDecimal.optional().describe('settlement units per 1 USD'),
      CNY: positiveDecimal.optional().describe('settlement units per 1 CNY'),
    })
    .default({})
    .describe(
      'market rates, settlement units per 1 unit of another currency ({ USD: 7.3 } under CNY): true-USD reports and prices listed in another currency; 7.3 per USD under CNY when unset',
    ),
  ledger: z
    .string()
    .regex(LEDGER_LOCATION, 'must be sqlite:PATH, a file path, postgres://…, or off')
    .default('sqlite:./data/herd.db')
    .describe('sqlite:PATH (relative to herd.yaml), a bare path, postgres://… for several replicas, or off (nothing is priced or recorded, budgets are not enforced)'),
  flush_interval_ms: z
    .number()
    .int()
    .positive()
    .default(1000)
    .describe(
      "request and attempt rows are saved before each answer's last byte (to a local spool when serving, else a group commit per event-loop turn); spooled rows go to the database this often, and a failed commit is retried this often...",
    ),
  flush_max_rows: z.number().int().positive().default(500).describe('...and a transaction holds at most this many rows'),
  spool_dir: z
    .string()
    .min(1)
    .optional()
    .describe(
      'the local folder (relative to herd.yaml) where a serving process keeps rows the database does not hold yet, so an outage of PostgreSQL or a killed process loses none; default LEDGER.spool next to a SQLite ledger, data/postgres-ledger.spool in the working directory for PostgreSQL; one per replica (a second live process refuses it)',
    ),
  stale_reservation_minutes: z
    .number()
    .positive()
    .default(60)
    .describe(
      'at start-up, open reservations with a committed request row are settled at its cost; those without one, open longer than this, are released (their process died before answering)',
    ),
  default_max_output_tokens: z
    .number()
    .int()
    .positive()
    .default(DEFAULT_MAX_OUTPUT_TOKENS)
    .describe('output tokens a key with a budget reserves for a request that sends no max_tokens, on a model without max_output_tokens'),
  alerts: alertsConfigSchema
    .default({ thresholds: [50, 80, 100], max_attempts: 8, timeout_ms: 10_000, lease_ms: 30_000, poll_interval_ms: 1000 })
    .describe('budget alerts: a webhook called once per budget, period and threshold crossed'),
  batch_discount: z
    .record(z.string().min(1), z.number().min(0).max(1))
    .default({})
    .describe(
      'by provider name: the fraction taken off its realtime prices for lines of a client batch sent to its batch API (0.5: half price), where a price has no batch rate of its own; absent: 0.5 for providers of type openai, anthropic and gemini (their documented batch pricing), none elsewhere',
    ),
  prices: z
    .array(billingPriceSchema)
    .default([])
    .describe('dated price-catalog entries, by model or by upstream model id (match); they override models.*.price from their effective time'),
});

export type BillingConfig = z.infer<typeof billingConfigSchema>;
export type BillingPriceConfig = z.infer<typeof billingPriceSchema>;

type Path = (string | number)[];
interface IssueSink {
  addIssue(issue: { code: 'custom'; path: Path; message: string }): void;
}

/** Pair with herdConfigSchema's superRefine: references from billing.prices and currency/fx consistency. */
export function checkBillingConfig(config: { billing: BillingConfig } & Pick<GatewayConfig, 'providers' | 'models'>, ctx: IssueSink): void {
  const report = (path: Path, message: string) => ctx.addIssue({ code: 'custom', path, message });
  const { billing } = config;
  const own = billing.fx[billing.currency];
  if (own !== undefined && Number(own) !== 1) {
    report(['billing', 'fx', billing.currency], `${billing.currency} is the settlement currency: its rate is 1 by definition (leave it out)`);
  }
  if (billing.alerts.lease_ms <= billing.alerts.timeout_ms) {
    report(['billing', 'alerts', 'lease_ms'], `must exceed timeout_ms (${billing.alerts.timeout_ms}): a delivery still waiting must not be taken over by another replica`);
  }
  if (billing.alerts.secret_env !== undefined && billing.alerts.webhook_url === undefined) {
    report(['billing', 'alerts', 'secret_env'], 'needs webhook_url (where the signed alerts go)');
  }
  for (const name of Object.keys(billing.batch_discount)) {
    if (!(name in config.providers)) report(['billing', 'batch_discount', name], `unknown provider '${name}'`);
  }
  const owners = new Map<string, string>();
  for (const [name, model] of Object.entries(config.models)) {
    owners.set(name, name);
    for (const alias of model.aliases) owners.set(alias, name);
  }
  const seen = new Set<string>();
  const checkCurrency = (entry: BillingPriceConfig, path: Path) => {
    if (entry.currency !== billing.currency && entry.currency !== 'USD' && billing.fx[entry.currency] === undefined) {
      report([...path, 'currency'], `prices in ${entry.currency} need billing.fx.${entry.currency} (${billing.currency} per ${entry.currency})`);
    }
  };
  billing.prices.forEach((entry, i) => {
    const path = ['billing', 'prices', i];
    if ((entry.model === undefined) === (entry.match === undefined)) {
      report(path, 'needs either model (a model name or alias) or match (an upstream model id or glob), not both');
      return;
    }
    if (entry.match !== undefined) {
      if (entry.provider !== undefined && !(entry.provider in config.providers)) report([...path, 'provider'], `unknown provider '${entry.provider}'`);
      checkCurrency(entry, path);
      const key = `match\u0000${entry.match}\u0000${entry.provider ?? ''}\u0000${parseEffectiveDate(entry.effective)}`;
      if (seen.has(key)) report([...path, 'effective'], `another entry for match '${entry.match}'${entry.provider ? ` on '${entry.provider}'` : ''} takes effect at the same time`);
      seen.add(key);
      return;
    }
    const model = owners.get(entry.model ?? '');
    if (model === undefined) {
      report([...path, 'model'], `unknown model '${entry.model}' (known: ${Object.keys(config.models).join(', ') || 'none configured'})`);
      return;
    }
    if (entry.provider !== undefined) {
      const deployed = config.models[model]?.deployments.map((d) => d.provider) ?? [];
      if (!(entry.provider in config.providers)) report([...path, 'provider'], `unknown provider '${entry.provider}'`);
      else if (!deployed.includes(entry.provider)) report([...path, 'provider'], `model '${model}' has no deployment on '${entry.provider}' (it has: ${deployed.join(', ')})`);
    }
    checkCurrency(entry, path);
    const key = `${model}\u0000${entry.provider ?? ''}\u0000${parseEffectiveDate(entry.effective)}`;
    if (seen.has(key)) report([...path, 'effective'], `another entry for '${model}'${entry.provider ? ` on '${entry.provider}'` : ''} takes effect at the same time`);
    seen.add(key);
  });
}

/** Epoch milliseconds of an `effective` value, or undefined when it is not a date. */
export function parseEffectiveDate(text: string): number | undefined {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const ms = Date.parse(`${text}T00:00:00Z`);
    return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text ? undefined : ms;
  }
  // A time without an offset would depend on the server's time zone: require one.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
