// Drains the budget-alert outbox: one sender per process claims due rows under a lease, POSTs each to the
// webhook with Standard Webhooks headers (a stable webhook-id, a timestamp, an HMAC-SHA256 signature),
// marks it delivered on 2xx, and retries with backoff until max_attempts, then marks it failed.
import { createHmac } from 'node:crypto';
import { hostname } from 'node:os';
import type { AlertsConfig } from '../../config/billing-config-schema.ts';
import type { AlertOutbox, AlertRow } from './alert-outbox.ts';
import type { BudgetLine } from './ledger.ts';
import { formatMicros, type CurrencyCode } from './money.ts';

const BACKOFF_BASE_MS = 1000;
const BACKOFF_CAP_MS = 300_000;
const CLAIM_BATCH = 20;

export interface AlertSenderOptions {
  outbox: AlertOutbox;
  config: AlertsConfig;
  /** The signing secret (the value of alerts.secret_env); undefined: deliveries are unsigned. */
  secret: string | undefined;
  currency: CurrencyCode;
  log: (line: string) => void;
  /** Names this sender in claims and in the webhook-sender header; default host:pid. */
  workerId?: string;
  now?: () => number;
  fetch?: typeof fetch;
}

/** The JSON body of one alert. */
export interface AlertBody {
  type: 'budget.threshold';
  id: string;
  owner: { kind: 'key' | 'team'; id: string; name: string } | null;
  subject: string;
  period: BudgetLine['period'] | null;
  bucket: string;
  model: string | null;
  threshold: number;
  currency: CurrencyCode;
  budget: string;
  spend: string;
  timezone: string | null;
  resets_at: string | null;
  crossed_at: string;
}

export class AlertSender {
  readonly workerId: string;
  private readonly now: () => number;
  private readonly fetch: typeof fetch;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: AlertSenderOptions) {
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}`;
    this.now = options.now ?? Date.now;
    this.fetch = options.fetch ?? fetch;
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops polling and waits for the deliveries under way (their leases then run out if they were cut short). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass: claims due rows and delivers them in turn. Returns how many it claimed. */
  async runOnce(): Promise<number> {
    const { config, outbox } = this.options;
    if (config.webhook_url === undefined) return 0;
    const rows = await outbox.claim(this.workerId, this.now(), config.lease_ms, CLAIM_BATCH);
    for (const row of rows) await this.deliver(row);
    return rows.length;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .catch((err: unknown) => this.options.log(`budget alerts: ${err instanceof Error ? err.message : String(err)}`))
        .then(() => this.schedule(this.options.config.poll_interval_ms));
    }, delayMs);
    this.timer.unref();
  }

  private async deliver(row: AlertRow): Promise<void> {
    const { config, outbox, log } = this.options;
    const url = config.webhook_url;
    if (url === undefined) return;
    const body = JSON.stringify(describeAlert(row, this.options.currency));
    const timestamp = Math.floor(this.now() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'webhook-id': row.id,
      'webhook-timestamp': String(timestamp),
      'webhook-sender': this.workerId,
      'user-agent': 'herd-budget-alerts',
    };
    if (this.options.secret !== undefined) headers['webhook-signature'] = signWebhook(this.options.secret, row.id, timestamp, body);
    let failure: string;
    try {
      const res = await this.fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(config.timeout_ms) });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) {
        await outbox.delivered(row.id, this.now());
        return;
      }
      failure = `the webhook answered ${res.status}`;
    } catch (err) {
      failure = `the webhook could not be reached: ${err instanceof Error ? err.message : String(err)}`;
    }
    const last = row.attempts >= config.max_attempts;
    const nextAt = last ? undefined : this.now() + Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (row.attempts - 1));
    await outbox.retry(row.id, this.workerId, nextAt, failure);
    log(
      last
        ? `budget alert ${row.id} (${row.subject} ${row.bucket} ${row.threshold}%) failed after ${row.attempts} attempts: ${failure}`
        : `budget alert ${row.id} attempt ${row.attempts} of ${config.max_attempts}: ${failure}; retrying`,
    );
  }
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`; a `whsec_` secret is base64 after the prefix (Standard Webhooks). */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

interface StoredPayload {
  owner?: AlertBody['owner'];
  period?: BudgetLine['period'];
  model?: string;
  timezone?: string;
  resetsAt?: number;
  limitMicros?: number;
  spentMicros?: number;
  crossedAt?: number;
}

export function describeAlert(row: AlertRow, currency: CurrencyCode): AlertBody {
  const p = JSON.parse(row.payload) as StoredPayload;
  return {
    type: 'budget.threshold',
    id: row.id,
    owner: p.owner ?? null,
    subject: row.subject,
    period: p.period ?? null,
    bucket: row.bucket,
    model: p.model ?? null,
    threshold: row.threshold,
    currency,
    budget: formatMicros(p.limitMicros ?? 0, 6),
    spend: formatMicros(p.spentMicros ?? 0, 6),
    timezone: p.timezone ?? null,
    resets_at: p.resetsAt === undefined ? null : new Date(p.resetsAt).toISOString(),
    crossed_at: new Date(p.crossedAt ?? row.createdAt).toISOString(),
  };
}
