// The limits and budget fields keys and teams share (allowed models, rpm, tpm, concurrency, one budget),
// as form state, and their conversion to the admin API's body: absent on create, null to clear on edit.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorNote } from '../components.tsx';
import { decimalToMicros, microsToDecimal } from '../format.ts';
import { useAction } from '../hooks.ts';
import { useSession } from '../session.ts';
import type { PolicyJson } from '../types.ts';

export interface PolicyFields {
  allowedModels: string;
  rpm: string;
  tpm: string;
  maxConcurrency: string;
  budgetAmount: string;
  budgetPeriod: 'day' | 'week' | 'month';
}

export const EMPTY_POLICY: PolicyFields = { allowedModels: '', rpm: '', tpm: '', maxConcurrency: '', budgetAmount: '', budgetPeriod: 'month' };

export function policyFieldsOf(policy: PolicyJson): PolicyFields {
  const budget = policy.budgets.find((b) => b.model === null) ?? policy.budgets[0];
  return {
    allowedModels: policy.allowed_models === '*' ? '*' : policy.allowed_models.join(', '),
    rpm: policy.rpm?.toString() ?? '',
    tpm: policy.tpm?.toString() ?? '',
    maxConcurrency: policy.max_concurrency?.toString() ?? '',
    budgetAmount: budget ? microsToDecimal(budget.amount_micros).replace(/,/g, '') : '',
    budgetPeriod: budget?.period ?? 'month',
  };
}

function whole(label: string, text: string): number | undefined {
  if (text.trim() === '') return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${label} must be a whole number of at least 1.`);
  return value;
}

/**
 * The body fields: `clear` (an edit) sends null for an emptied field so the server clears it; a create
 * leaves it out. Throws a message the form shows when a value is not a number.
 */
export function policyBody(fields: PolicyFields, clear: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const set = (name: string, value: unknown) => {
    if (value !== undefined) body[name] = value;
    else if (clear) body[name] = null;
  };
  const models = fields.allowedModels.trim();
  set(
    'allowed_models',
    models === ''
      ? undefined
      : models === '*'
        ? '*'
        : models
            .split(',')
            .map((m) => m.trim())
            .filter((m) => m !== ''),
  );
  set('rpm', whole('Requests per minute', fields.rpm));
  set('tpm', whole('Tokens per minute', fields.tpm));
  set('max_concurrency', whole('Max concurrent requests', fields.maxConcurrency));
  if (fields.budgetAmount.trim() === '') set('budgets', clear ? [] : undefined);
  else {
    const micros = decimalToMicros(fields.budgetAmount);
    if (micros === undefined) throw new Error('Budget must be an amount such as 25 or 12.50.');
    body.budgets = [{ period: fields.budgetPeriod, amount_micros: micros }];
  }
  return body;
}

/** The inputs; `prefix` keeps ids unique when two such forms are on one page. */
export function PolicyInputs({ fields, onChange, prefix, currency }: { fields: PolicyFields; onChange: (fields: PolicyFields) => void; prefix: string; currency: string | null }) {
  const input = (name: keyof PolicyFields, label: string, hint?: string) => (
    <div class="field">
      <label for={`${prefix}-${name}`}>{label}</label>
      <input
        id={`${prefix}-${name}`}
        value={fields[name]}
        onInput={(e) => onChange({ ...fields, [name]: e.currentTarget.value })}
        inputMode={name === 'allowedModels' ? undefined : 'decimal'}
      />
      {hint && <small class="muted">{hint}</small>}
    </div>
  );
  return (
    <>
      {input('allowedModels', 'Allowed models', '* or names separated by commas; empty: unchanged default')}
      {input('rpm', 'Requests per minute')}
      {input('tpm', 'Tokens per minute')}
      {input('maxConcurrency', 'Max concurrent requests')}
      {input('budgetAmount', `Budget${currency ? ` (${currency})` : ''}`)}
      <div class="field">
        <label for={`${prefix}-budgetPeriod`}>Budget period</label>
        <select
          id={`${prefix}-budgetPeriod`}
          value={fields.budgetPeriod}
          onChange={(e) => onChange({ ...fields, budgetPeriod: e.currentTarget.value as PolicyFields['budgetPeriod'] })}
        >
          <option value="day">day</option>
          <option value="week">week</option>
          <option value="month">month</option>
        </select>
      </div>
    </>
  );
}

export function policySummary(policy: PolicyJson, currency: string | null): string {
  const parts: string[] = [];
  if (policy.rpm !== null) parts.push(`${policy.rpm} rpm`);
  if (policy.tpm !== null) parts.push(`${policy.tpm} tpm`);
  if (policy.max_concurrency !== null) parts.push(`${policy.max_concurrency} concurrent`);
  for (const b of policy.budgets) parts.push(`${currency ?? ''} ${microsToDecimal(b.amount_micros)} per ${b.period}${b.model ? ` on ${b.model}` : ''}`.trim());
  return parts.join(', ') || 'none';
}

/** An edit sends only what changed, so a key's other budgets or fields are not rewritten by a form that shows one. */
export function changedPolicyBody(initial: PolicyFields, fields: PolicyFields): Record<string, unknown> {
  const before = policyBody(initial, true);
  const after = policyBody(fields, true);
  return Object.fromEntries(Object.entries(after).filter(([name, value]) => JSON.stringify(value) !== JSON.stringify(before[name])));
}

/** The limits and budget of a key or a team, edited in place: only the changed fields are sent (PATCH). */
export function EditLimitsForm({
  owner,
  url,
  prefix,
  onDone,
  onChanged,
}: {
  owner: PolicyJson & { name: string };
  url: string;
  prefix: string;
  onDone: () => void;
  onChanged: () => void;
}) {
  const currency = useSession().server.currency;
  const initial = policyFieldsOf(owner);
  const [policy, setPolicy] = useState(initial);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body = changedPolicyBody(initial, policy);
      if (Object.keys(body).length > 0) await api(url, { method: 'PATCH', body });
      onDone();
      onChanged();
    });
  };
  return (
    <form class="grid-form" aria-label={`Limits of ${owner.name}`} onSubmit={submit}>
      <PolicyInputs fields={policy} onChange={setPolicy} prefix={prefix} currency={currency} />
      <div class="form-actions">
        <button type="submit" disabled={action.busy}>
          Save limits
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
      <ErrorNote error={action.error} />
    </form>
  );
}
