// Tables and detail views for `herd keys|teams|audit`, from the admin API's JSON shapes (so the CLI
// shows exactly what GET /admin/v1/… returns). Times in UTC to the minute.
import type { KeyJson } from '../gateway/admin/convert-admin-json.ts';
import { formatBudgetAmount } from '../gateway/keys/budget-amount.ts';
import { formatPolicyLimits } from './parse-policy-flags.ts';

export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const table = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length)));
  const rule = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  const format = (row: readonly string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [rule, format(header), rule, ...rows.map(format), rule].join('\n');
}

export function formatTime(iso: string | null): string {
  return iso === null ? '-' : `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

export function formatModels(models: '*' | readonly string[]): string {
  return models === '*' ? '*' : models.join(',') || '(none)';
}

/** `1.25 of 10.00 /day`; `-` without a budget of its own; `?` when no ledger was read. */
function formatSpend(key: KeyJson): string {
  if (key.spend === undefined) return '?';
  if (key.spend === null) return '-';
  return `${key.spend.spent} of ${formatBudgetAmount(key.spend.limit_micros)} /${key.spend.period}`;
}

export function formatKeysTable(keys: readonly KeyJson[]): string {
  const header = ['ID', 'Name', 'Team', 'Role', 'State', 'Spend this period', 'Last used', 'Expires'];
  const rows = keys.map((k) => [k.id, k.name, k.team?.name ?? '-', k.role, k.state, formatSpend(k), formatTime(k.last_used_at), formatTime(k.expires_at)]);
  return formatTable(header, rows);
}

export function formatKeyDetails(key: KeyJson): string {
  const lines: [string, string][] = [
    ['id', key.id],
    ['name', key.name],
    ['prefix', `${key.prefix}…`],
    ['team', key.team ? `${key.team.name} (${key.team.id})` : '-'],
    ['role', key.role],
    ['state', key.state],
    ['models', formatModels(key.allowed_models)],
    ['limits', formatPolicyLimits(key) || '-'],
    ['time zone', key.timezone],
    ['alerts', key.alert_thresholds.length > 0 ? key.alert_thresholds.map((t) => `${t}%`).join(', ') : '-'],
    ['spend this period', formatSpend(key)],
    ['priority', key.priority ?? '-'],
    ['client CIDRs', key.allowed_cidrs.join(', ') || 'any'],
    ['tags', key.tags.join(', ') || '-'],
    [
      'metadata',
      Object.entries(key.metadata)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ') || '-',
    ],
    ['expires', formatTime(key.expires_at)],
    ['created', formatTime(key.created_at)],
    ['last used', formatTime(key.last_used_at)],
    ['rotated', formatTime(key.rotated_at)],
    ['revoked', formatTime(key.revoked_at)],
  ];
  const width = Math.max(...lines.map(([label]) => label.length));
  return lines.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}
