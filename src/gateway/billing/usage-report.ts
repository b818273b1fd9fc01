// The usage report behind `herd usage` and GET /admin/usage: ledger spend and tokens grouped by day,
// model, provider or key, in the settlement currency, true USD and list USD; one JSON shape, one table.
import { HerdError } from '../../core/errors.ts';
import { formatCount, formatReportTable } from './format-report-table.ts';
import { USAGE_GROUPS, type Ledger, type UsageGroup, type UsageRow } from './ledger.ts';
import { addMicros, formatBillAmount, formatMicros, type CurrencyCode } from './money.ts';

export interface UsageReport {
  sinceMs: number;
  untilMs: number;
  by: UsageGroup;
  rows: UsageRow[];
  /** One per settlement currency found (normally one). */
  totals: UsageRow[];
}

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `7d`, `24h`, `30m`, `2w` before `nowMs`; or a date (`2026-05-01`, 00:00 UTC) or ISO time with offset. */
export function parseSince(text: string, nowMs: number): number {
  const value = text.trim();
  const relative = /^(\d+)\s*([mhdw])$/i.exec(value);
  if (relative) return nowMs - Number(relative[1]) * (UNIT_MS[(relative[2] as string).toLowerCase()] as number);
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const ms = Date.parse(`${value}T00:00:00Z`);
    if (!Number.isNaN(ms)) return ms;
  } else if (/^\d{4}-\d{2}-\d{2}T.+(?:Z|[+-]\d{2}:\d{2})$/.test(value)) {
    const ms = Date.parse(value);
    if (!Number.isNaN(ms)) return ms;
  }
  throw new HerdError('INVALID_ARG', `since must be a duration such as 7d, 24h, 30m or 2w, or a date such as 2026-05-01, got '${text}'`, { param: 'since' });
}

export function parseUsageGroup(text: string | undefined): UsageGroup {
  const value = (text ?? 'day').trim();
  if ((USAGE_GROUPS as readonly string[]).includes(value)) return value as UsageGroup;
  throw new HerdError('INVALID_ARG', `by must be one of ${USAGE_GROUPS.join(', ')}, got '${text}'`, { param: 'by' });
}

export async function buildUsageReport(ledger: Pick<Ledger, 'usage'>, query: { sinceMs: number; untilMs: number; by: UsageGroup }): Promise<UsageReport> {
  const rows = await ledger.usage(query);
  return { ...query, rows, totals: sumByCurrency(rows) };
}

function sumByCurrency(rows: readonly UsageRow[]): UsageRow[] {
  const totals = new Map<CurrencyCode, UsageRow>();
  for (const row of rows) {
    const t = totals.get(row.currency);
    if (!t) {
      totals.set(row.currency, { ...row, group: 'total', keyName: undefined });
      continue;
    }
    for (const field of SUMMED) t[field] = addMicros(t[field], row[field]);
  }
  return [...totals.values()];
}

const SUMMED = [
  'requests',
  'failed',
  'cacheHits',
  'estimated',
  'promptTokens',
  'cachedPromptTokens',
  'cacheWriteTokens',
  'completionTokens',
  'reasoningTokens',
  'reportedReasoningTokens',
  'costMicros',
  'usdMicros',
  'listUsdMicros',
  'savedMicros',
  'cacheWrite1hTokens',
  'cacheReadSavedMicros',
  'batchRequests',
  'batchSavedUsdMicros',
] as const satisfies ReadonlyArray<keyof UsageRow>;

/** Exact integers (micros, tokens) for programs; cent-rounded strings for people. */
export function convertUsageReportToJson(report: UsageReport) {
  const row = (r: UsageRow) => ({
    ...(r.group === 'total' ? {} : { group: r.group }),
    ...(report.by === 'key' && r.group !== 'total' ? { key_name: r.keyName ?? null } : {}),
    ...(report.by === 'team' && r.group !== 'total' ? { team_name: r.keyName ?? null } : {}),
    currency: r.currency,
    requests: r.requests,
    failed: r.failed,
    cache_hits: r.cacheHits,
    estimated: r.estimated,
    tokens: {
      prompt: r.promptTokens,
      cached_prompt: r.cachedPromptTokens,
      cache_write: r.cacheWriteTokens,
      cache_write_1h: r.cacheWrite1hTokens,
      completion: r.completionTokens,
      reasoning: r.reasoningTokens,
      reported_reasoning: r.reportedReasoningTokens,
    },
    cost_micros: r.costMicros,
    cost: formatMicros(r.costMicros),
    usd_micros: r.usdMicros,
    usd: formatMicros(r.usdMicros),
    list_usd_micros: r.listUsdMicros,
    list_usd: formatMicros(r.listUsdMicros),
    saved_micros: r.savedMicros,
    saved: formatMicros(r.savedMicros),
    cache_read_saved_micros: r.cacheReadSavedMicros,
    cache_read_saved: formatMicros(r.cacheReadSavedMicros),
    // The two savings in USD side by side: the providers' exchange rates (list less true USD) and batch prices.
    rate_saved_usd_micros: r.listUsdMicros - r.usdMicros,
    rate_saved_usd: formatMicros(r.listUsdMicros - r.usdMicros),
    batch_requests: r.batchRequests,
    batch_saved_usd_micros: r.batchSavedUsdMicros,
    batch_saved_usd: formatMicros(r.batchSavedUsdMicros),
  });
  return {
    object: 'usage.report',
    since: new Date(report.sinceMs).toISOString(),
    until: new Date(report.untilMs).toISOString(),
    by: report.by,
    rows: report.rows.map(row),
    totals: report.totals.map(row),
  };
}

export function formatUsageReport(report: UsageReport): string {
  const title = `Usage from ${formatTime(report.sinceMs)} to ${formatTime(report.untilMs)} by ${report.by}`;
  if (report.rows.length === 0) return `${title}: no requests.\n`;
  const label = (r: UsageRow) => (report.by === 'key' || report.by === 'team' ? labelKey(r.group, r.keyName) : r.group);
  const cells = (r: UsageRow) => [
    label(r),
    formatCount(r.requests),
    formatCount(r.failed),
    formatCount(r.cacheHits),
    formatCount(r.promptTokens),
    formatCount(r.cachedPromptTokens),
    formatCount(r.cacheWriteTokens),
    formatCount(r.completionTokens),
    formatCount(r.reasoningTokens),
    formatBillAmount(r.costMicros, r.currency),
    formatBillAmount(r.usdMicros, 'USD'),
    formatBillAmount(r.listUsdMicros, 'USD'),
    formatBillAmount(r.listUsdMicros - r.usdMicros, 'USD'),
    formatBillAmount(r.batchSavedUsdMicros, 'USD'),
    formatBillAmount(r.savedMicros, r.currency),
    formatBillAmount(r.cacheReadSavedMicros, r.currency),
  ];
  const header = [
    report.by,
    'requests',
    'failed',
    'cache hits',
    'prompt',
    'cached',
    'cache write',
    'completion',
    'reasoning',
    'cost',
    'true USD',
    'list USD',
    'rate saved',
    'batch saved',
    'cache saved',
    'read saved',
  ];
  const table = formatReportTable({
    header,
    align: ['left', ...Array<'right'>(header.length - 1).fill('right')],
    rows: report.rows.map(cells),
    footer: report.totals.map(cells),
  });
  const estimated = report.totals.reduce((n, t) => n + t.estimated, 0);
  const reasoning = report.totals.reduce((n, t) => n + t.reasoningTokens, 0);
  const reported = report.totals.reduce((n, t) => n + t.reportedReasoningTokens, 0);
  const batchLines = report.totals.reduce((n, t) => n + t.batchRequests, 0);
  const notes = [
    'cost: what was charged, in the settlement currency; true USD: that at the market rate; list USD: the same tokens at list price (a batch line: its batch price).',
    `rate saved: list USD less true USD, what the providers' exchange rates saved; batch saved: batch lines at the realtime list price less their batch price (${formatCount(batchLines)} batch line(s)).`,
    "cached / cache write: prompt tokens read from / written to the upstream's prompt cache; cache saved: answers from Herd's cache; read saved: cached tokens at the input price less what they cost.",
    ...(reasoning > 0
      ? [`reasoning: completion tokens spent reasoning; ${formatCount(reported)} of them as the upstreams reported them, the rest counted by Herd (Anthropic reports none apart).`]
      : []),
    ...(estimated > 0 ? [`${formatCount(estimated)} request(s) were counted by Herd's tokenizer because the upstream reported no usage.`] : []),
  ];
  return `${title}\n\n${table}\n\n${notes.join('\n')}\n`;
}

/**
 * A key's id with its name: `key_3 (alice)`. A name that already starts with the id (the master
 * key's `master ($HERD_MASTER_KEY)`) or is the id is shown once.
 */
export function labelKey(id: string, name: string | undefined): string {
  if (name === undefined || name === '' || name === id) return id;
  return name.startsWith(`${id} `) ? name : `${id} (${name})`;
}

function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
