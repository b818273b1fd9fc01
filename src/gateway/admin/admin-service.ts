// The one service behind the admin REST API and `herd keys|teams|audit`: role checks, key and team
// changes through the KeyStore (each with its audit context), usage, audit reads and the catalog.
import { HerdError } from '../../core/errors.ts';
import type { Ledger } from '../billing/ledger.ts';
import { buildUsageReport, convertUsageReportToJson } from '../billing/usage-report.ts';
import type { UsageGroup } from '../billing/ledger.ts';
import type {
  AuditListQuery,
  ChangeContext,
  IdempotentAnswer,
  KeyFields,
  KeyInfo,
  KeyListQuery,
  KeyPatch,
  KeyStore,
  RotateOptions,
  StoredKey,
  TeamFields,
  TeamListQuery,
  TeamPatch,
} from '../keys/key-store.ts';
import type { ModelListEntry } from '../protocol/model-list-entry.ts';
import { requireAccess, requireKeyInScope, requireManagerKeyFields } from './admin-roles.ts';
import { type BudgetPlanner, readBudgetStatus, readPeriodSpend } from './budget-status.ts';
import { convertAuditEventToJson, convertBudgetStatusToJson, convertKeyToJson, convertTeamRefToJson, convertTeamToJson, type KeyJson } from './convert-admin-json.ts';
import type { RoutesJson } from './describe-routes.ts';

/** What GET /admin/v1/models and /routes read: the gateway's catalog (absent in a CLI). */
export interface AdminCatalog {
  listModels(): Promise<ModelListEntry[]>;
  routes(): RoutesJson;
}

export interface AdminServiceDeps {
  store: KeyStore;
  /** Spend and usage; undefined with billing.ledger: off (spend columns then stay out). */
  ledger?: Pick<Ledger, 'budgetSpend' | 'usage'> | undefined;
  /** plan-budgets.ts's planBudgets; without it no spend is read. */
  planBudgets?: BudgetPlanner | undefined;
  catalog?: AdminCatalog | undefined;
  /** Settlement currency, shown beside amounts (billing.currency). */
  currency?: string | undefined;
  now?: () => number;
}

export interface ListPage<T> {
  data: T[];
  next_cursor: string | null;
}

export class AdminService {
  readonly store: KeyStore;
  private readonly deps: AdminServiceDeps;
  private readonly now: () => number;

  constructor(deps: AdminServiceDeps) {
    this.deps = deps;
    this.store = deps.store;
    this.now = deps.now ?? Date.now;
  }

  async listKeys(ctx: ChangeContext, query: KeyListQuery): Promise<ListPage<KeyJson>> {
    requireAccess(ctx.actor, 'keys.read', 'listing keys');
    let scoped = query;
    if (ctx.actor.role === 'manager') {
      const own = ctx.actor.teamId as string;
      // Only a team named by the caller is looked up: the page itself stays one store query.
      if (query.team !== undefined && query.team !== own && (await this.store.findTeam(query.team)).id !== own) {
        throw new HerdError('PERMISSION_DENIED', `The key '${ctx.actor.name}' (role manager) lists only its own team's keys, not team '${query.team}'.`, { reason: 'admin_only' });
      }
      scoped = { ...query, team: own };
    }
    // One store query for the page, one ledger query for the page's spend.
    const page = await this.store.listKeys(scoped);
    const now = this.now();
    const spend = await this.periodSpend(page.items, now);
    return { data: page.items.map((k) => convertKeyToJson(k, now, spend === undefined ? undefined : (spend.get(k.id) ?? null))), next_cursor: page.next ?? null };
  }

  async getKey(ctx: ChangeContext, ref: string): Promise<KeyJson> {
    requireAccess(ctx.actor, 'keys.read', `reading key ${ref}`);
    const key = await this.store.findKey(ref);
    requireKeyInScope(ctx.actor, key, false);
    return this.keyJson(key);
  }

  async createKey(ctx: ChangeContext, fields: KeyFields): Promise<{ key: KeyJson; secret: string }> {
    requireAccess(ctx.actor, 'keys.write', 'creating a key');
    let scoped = fields;
    if (ctx.actor.role === 'manager') {
      const own = await this.store.findTeam(ctx.actor.teamId as string);
      requireManagerKeyFields(ctx.actor, fields, own);
      scoped = { ...fields, team: own.id, role: 'client' };
    }
    const created = await this.store.createKey(scoped, ctx);
    return { key: convertKeyToJson(created.key, this.now()), secret: created.secret };
  }

  async updateKey(ctx: ChangeContext, ref: string, patch: KeyPatch): Promise<KeyJson> {
    const key = await this.keyForWrite(ctx, ref, 'updating a key');
    if (ctx.actor.role === 'manager') requireManagerKeyFields(ctx.actor, patch, key.team ?? { id: '', name: '' });
    return this.keyJson(await this.store.updateKey(key.id, patch, ctx));
  }

  async rotateKey(ctx: ChangeContext, ref: string, options: RotateOptions): Promise<{ key: KeyJson; secret: string; graceUntil: Date; replayed: boolean }> {
    const key = await this.keyForWrite(ctx, ref, 'rotating a key');
    const rotated = await this.store.rotateKey(key.id, options, ctx);
    return { key: convertKeyToJson(rotated.key, this.now()), secret: rotated.secret, graceUntil: rotated.graceUntil, replayed: rotated.replayed };
  }

  async setBlocked(ctx: ChangeContext, ref: string, blocked: boolean): Promise<KeyJson> {
    const key = await this.keyForWrite(ctx, ref, blocked ? 'blocking a key' : 'unblocking a key');
    return this.keyJson(await this.store.setBlocked(key.id, blocked, ctx));
  }

  async revokeKey(ctx: ChangeContext, ref: string): Promise<{ key: KeyJson; alreadyRevoked: boolean }> {
    const key = await this.keyForWrite(ctx, ref, 'revoking a key');
    const result = await this.store.revokeKey(key.id, ctx);
    return { key: convertKeyToJson(result.key, this.now()), alreadyRevoked: result.alreadyRevoked };
  }

  async listTeams(ctx: ChangeContext, query: TeamListQuery): Promise<ListPage<ReturnType<typeof convertTeamToJson>>> {
    if (ctx.actor.role === 'manager') {
      requireAccess(ctx.actor, 'keys.read', 'listing teams');
      return { data: [convertTeamToJson(await this.store.findTeam(ctx.actor.teamId as string))], next_cursor: null };
    }
    requireAccess(ctx.actor, 'read', 'listing teams');
    const page = await this.store.listTeams(query);
    return { data: page.items.map(convertTeamToJson), next_cursor: page.next ?? null };
  }

  async getTeam(ctx: ChangeContext, ref: string): Promise<ReturnType<typeof convertTeamToJson>> {
    if (ctx.actor.role === 'manager') {
      requireAccess(ctx.actor, 'keys.read', `reading team ${ref}`);
      const team = await this.store.findTeam(ref);
      if (team.id !== ctx.actor.teamId)
        throw new HerdError('PERMISSION_DENIED', `The key '${ctx.actor.name}' (role manager) reads only its own team, not '${team.name}'.`, { reason: 'admin_only' });
      return convertTeamToJson(team);
    }
    requireAccess(ctx.actor, 'read', `reading team ${ref}`);
    return convertTeamToJson(await this.store.findTeam(ref));
  }

  async createTeam(ctx: ChangeContext, fields: TeamFields) {
    requireAccess(ctx.actor, 'write', 'creating a team');
    return convertTeamToJson(await this.store.createTeam(fields, ctx));
  }

  async updateTeam(ctx: ChangeContext, ref: string, patch: TeamPatch) {
    requireAccess(ctx.actor, 'write', `updating team ${ref}`);
    return convertTeamToJson(await this.store.updateTeam(ref, patch, ctx));
  }

  async deleteTeam(ctx: ChangeContext, ref: string) {
    requireAccess(ctx.actor, 'write', `deleting team ${ref}`);
    return convertTeamToJson(await this.store.deleteTeam(ref, ctx));
  }

  async usage(ctx: ChangeContext, query: { sinceMs: number; untilMs: number; by: UsageGroup }) {
    requireAccess(ctx.actor, 'read', 'reading usage');
    const ledger = this.deps.ledger;
    if (!ledger) throw new HerdError('UNAVAILABLE', 'usage needs the ledger, and billing.ledger is off in herd.yaml');
    if (query.untilMs <= query.sinceMs) throw new HerdError('INVALID_ARG', 'until must be after since', { param: 'until' });
    return convertUsageReportToJson(await buildUsageReport(ledger, query));
  }

  async listAudit(ctx: ChangeContext, query: AuditListQuery) {
    requireAccess(ctx.actor, 'read', 'reading the audit log');
    const page = await this.store.listAudit(query);
    return { data: page.items.map(convertAuditEventToJson), next_cursor: page.next ?? null };
  }

  async verifyAudit(ctx: ChangeContext) {
    requireAccess(ctx.actor, 'read', 'verifying the audit log');
    const result = await this.store.verifyAudit();
    return result.ok ? { ok: true, rows: result.rows, broken_seq: null, reason: null } : { ok: false, rows: result.rows, broken_seq: result.brokenSeq, reason: result.reason };
  }

  async models(ctx: ChangeContext) {
    requireAccess(ctx.actor, 'read', 'reading the model catalogue');
    return { data: (await this.catalog().listModels()).map((m) => ({ ...m, herd: { ...m.herd } })) };
  }

  async routes(ctx: ChangeContext) {
    requireAccess(ctx.actor, 'read', 'reading the routes');
    return this.catalog().routes();
  }

  /** GET /v1/me: what the key itself may see — no admin right needed, nothing about other keys. */
  async me(key: KeyInfo) {
    const now = this.now();
    const { ledger, planBudgets } = this.deps;
    const budgets = ledger && planBudgets ? await readBudgetStatus(key, now, planBudgets, ledger) : undefined;
    return {
      id: key.id,
      name: key.name,
      role: key.role,
      team: convertTeamRefToJson(key.team),
      allowed_models: key.allowedModels === '*' ? '*' : [...key.allowedModels],
      limits: { rpm: key.rpm ?? null, tpm: key.tpm ?? null, max_concurrency: key.maxConcurrency ?? null, priority: key.defaultPriority?.toLowerCase() ?? null },
      team_limits: key.team ? { rpm: key.team.rpm ?? null, tpm: key.team.tpm ?? null, max_concurrency: key.team.maxConcurrency ?? null } : null,
      currency: this.deps.currency ?? null,
      // null: this server keeps no ledger, so spend is not known.
      budgets: budgets === undefined ? null : budgets.map(convertBudgetStatusToJson),
      expires_at: key.expiresAt === undefined ? null : new Date(key.expiresAt).toISOString(),
      tags: [...(key.tags ?? [])],
    };
  }

  /** Runs a mutation once per (actor, Idempotency-Key); see KeyStore.idempotent. */
  idempotent(ctx: ChangeContext, idempotencyKey: string, fingerprint: string, run: () => Promise<IdempotentAnswer>) {
    return this.store.idempotent(ctx.actor.id, idempotencyKey, fingerprint, run);
  }

  private async keyForWrite(ctx: ChangeContext, ref: string, what: string): Promise<StoredKey> {
    requireAccess(ctx.actor, 'keys.write', what);
    const key = await this.store.findKey(ref);
    requireKeyInScope(ctx.actor, key, true);
    return key;
  }

  private async keyJson(key: StoredKey): Promise<KeyJson> {
    const now = this.now();
    const spend = await this.periodSpend([key], now);
    return convertKeyToJson(key, now, spend === undefined ? undefined : (spend.get(key.id) ?? null));
  }

  private async periodSpend(keys: readonly StoredKey[], now: number) {
    const { ledger, planBudgets } = this.deps;
    if (!ledger || !planBudgets || keys.length === 0) return ledger && planBudgets ? new Map() : undefined;
    return readPeriodSpend(keys, now, planBudgets, ledger);
  }

  private catalog(): AdminCatalog {
    if (!this.deps.catalog) throw new HerdError('UNAVAILABLE', 'the model catalogue is served only by a running gateway (herd.yaml names no models here)');
    return this.deps.catalog;
  }
}
