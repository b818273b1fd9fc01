// Which errors are Herd refusing a caller (bad or unusable key, a model it may not use, its limits or
// budget) rather than failing, and the one audit event each becomes. Refusals are not ledger rows (they
// spent nothing): every kind lands in the audit log the same way, aggregated per key per minute.
import type { HerdError } from '../../core/errors.ts';
import type { AuditEventInput, ChangeContext, KeyInfo } from '../keys/key-store.ts';

export interface RefusalInput {
  error: HerdError;
  /** Set once the request's key was known. */
  key?: KeyInfo | undefined;
  /** The `model` the client asked for, when the body had one. */
  model?: string | undefined;
  sourceIp?: string | undefined;
  requestId?: string | undefined;
}

/** Takes a refusal's audit event; the aggregator behind it folds a minute's repeats into one row. */
export type RecordRefusal = (event: AuditEventInput, ctx: ChangeContext) => void;

/** The audit event for a refusal, or undefined when `error` is not one (an upstream failure, a bad body). */
export function describeRefusal(input: RefusalInput): { event: AuditEventInput; ctx: ChangeContext } | undefined {
  const { error, key } = input;
  const reason = refusalReason(error);
  if (reason === undefined) return undefined;
  const actor = key === undefined ? { id: 'unknown', name: 'no valid key', role: 'client' as const } : { id: key.id, name: key.name, role: key.role, teamId: key.team?.id };
  return {
    event: { action: `refusal.${reason}`, object: input.model === undefined ? 'gateway' : `model:${input.model}`, after: { message: error.message } },
    ctx: { actor, sourceIp: input.sourceIp, requestId: input.requestId },
  };
}

function refusalReason(error: HerdError): string | undefined {
  switch (error.code) {
    case 'UNAUTHENTICATED':
    case 'PERMISSION_DENIED':
      return error.reason ?? error.code.toLowerCase();
    case 'RATE_LIMITED':
      return 'rate_limited';
    case 'BUDGET_EXCEEDED':
      return 'budget_exceeded';
    default:
      return undefined;
  }
}
