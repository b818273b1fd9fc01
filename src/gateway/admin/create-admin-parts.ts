// The composition root's one call for the admin side: the AdminService over the gateway's key store,
// ledger and catalogue, and the audit aggregator its sign-ins (and later refusals) are counted in.
import type { Ledger } from '../billing/ledger.ts';
import { planBudgets } from '../billing/plan-budgets.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { ModelListEntry } from '../protocol/model-list-entry.ts';
import type { GatewayCatalog } from '../router/gateway-catalog.ts';
import { AdminService } from './admin-service.ts';
import { AuditAggregator } from './audit-aggregator.ts';
import { describeRoutes } from './describe-routes.ts';

export interface AdminPartsOptions {
  store: KeyStore;
  /** Undefined with billing.ledger: off: no spend, no usage. */
  ledger: Ledger | undefined;
  catalog: GatewayCatalog;
  /** Every model the gateway routes (ChatGateway.listModels without a filter). */
  listModels: () => Promise<ModelListEntry[]>;
  currency?: string;
  /** billing.alerts.thresholds, for budgets that set none. */
  defaultThresholds?: readonly number[];
  log?: (line: string) => void;
}

export interface AdminParts {
  service: AdminService;
  audit: AuditAggregator;
}

export function createAdminParts(options: AdminPartsOptions): AdminParts {
  const thresholds = options.defaultThresholds ?? [];
  const service = new AdminService({
    store: options.store,
    ledger: options.ledger,
    planBudgets: (key, atMs, model) => planBudgets(key, atMs, model, { defaultThresholds: thresholds }),
    catalog: { listModels: options.listModels, routes: () => describeRoutes(options.catalog) },
    currency: options.currency,
  });
  const audit = new AuditAggregator({ store: options.store, onError: (err) => options.log?.(`audit: ${err instanceof Error ? err.message : String(err)}`) });
  return { service, audit };
}
