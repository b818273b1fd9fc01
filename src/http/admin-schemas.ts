// The admin API's wire shapes as zod schemas: requests are validated with them, and the route schemas
// and the OpenAPI document (admin-openapi.ts) are generated from them, so the three cannot drift apart.
import { z } from 'zod';
import { KEY_ROLES } from '../gateway/keys/key-store.ts';

const count = z.int().min(1);
const models = z.union([z.literal('*'), z.array(z.string().min(1))]);
const budgetRule = z.strictObject({
  period: z.enum(['day', 'week', 'month']),
  /** Integer micro-units of the settlement currency: exact, no floating point. */
  amount_micros: z.int().min(0),
  model: z.string().min(1).optional(),
});
const priority = z.enum(['high', 'normal', 'batch']);
const role = z.enum(KEY_ROLES as ['admin', 'viewer', 'manager', 'client']);

const policyFields = {
  allowed_models: models.optional().describe("'*' or model names, aliases and `*` patterns"),
  budgets: z.array(budgetRule).optional(),
  timezone: z.string().min(1).optional().describe('IANA zone the budget periods align to (default UTC)'),
  alert_thresholds: z.array(z.int().min(1).max(1000)).optional().describe('percent of each budget, e.g. [50, 80, 100]'),
  rpm: count.optional(),
  tpm: count.optional(),
  max_concurrency: count.optional(),
};

const keyFields = {
  team: z.string().min(1).optional().describe('team id or name'),
  role: role.optional(),
  priority: priority.optional(),
  allowed_cidrs: z.array(z.string().min(1)).optional(),
  tags: z.array(z.string().min(1)).optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  expires_at: z.string().min(1).optional().describe('ISO date or time (2027-01-01, 2027-01-01T00:00:00Z) or a duration from now (30d, 12h)'),
  cap_max_tokens: z.boolean().optional(),
};

export const createKeyBody = z.strictObject({ name: z.string().min(1), ...policyFields, ...keyFields });
/** Only the fields present change; null clears a limit, the expiry or the team. */
export const updateKeyBody = z.strictObject(nullable({ name: z.string().min(1).optional(), ...policyFields, ...keyFields }));
export const rotateKeyBody = z.strictObject({
  grace: z.union([z.int().min(0), z.string().min(1)]).optional().describe('how long the old secret keeps working: seconds, or 30m, 24h, 7d (default 24h)'),
  rotation_id: z.string().min(16).max(200).optional().describe('16–200 random characters (a UUID): rotating again with the same id returns the same new secret, whatever the Idempotency-Key'),
});
export const createTeamBody = z.strictObject({ name: z.string().min(1), ...policyFields });
export const updateTeamBody = z.strictObject(nullable({ name: z.string().min(1).optional(), ...policyFields }));
export const emptyBody = z.strictObject({});

export const refParams = z.strictObject({ ref: z.string().min(1).describe('public id, name (team/name), or prefix') });
const limit = z.string().regex(/^\d+$/).optional().describe('page size, 1–500 (default 50)');
const cursor = z.string().min(1).optional().describe('next_cursor of the previous page');
export const keyListQuery = z.strictObject({
  team: z.string().min(1).optional(),
  search: z.string().min(1).optional(),
  include_revoked: z.enum(['true', 'false']).optional(),
  limit,
  cursor,
});
export const teamListQuery = z.strictObject({ search: z.string().min(1).optional(), limit, cursor });
export const auditListQuery = z.strictObject({
  action: z.string().min(1).optional(),
  object: z.string().min(1).optional(),
  actor: z.string().min(1).optional(),
  since: z.string().min(1).optional().describe('a duration back from now (7d, 24h) or a date'),
  until: z.string().min(1).optional(),
  limit,
  cursor,
});
export const usageQuery = z.strictObject({
  since: z.string().min(1).optional().describe('default 7d'),
  until: z.string().min(1).optional(),
  by: z.string().min(1).optional().describe('day | model | provider | key | team (as the ledger offers)'),
});

// Responses.
const isoOrNull = z.string().nullable();
const teamRef = z.object({ id: z.string(), name: z.string() }).nullable();
const budgetRuleJson = z.object({ period: z.enum(['day', 'week', 'month']), amount_micros: z.int(), amount: z.string(), model: z.string().nullable() });
const policyJson = {
  allowed_models: z.union([z.literal('*'), z.array(z.string())]),
  budgets: z.array(budgetRuleJson),
  timezone: z.string(),
  alert_thresholds: z.array(z.number()),
  rpm: z.int().nullable(),
  tpm: z.int().nullable(),
  max_concurrency: z.int().nullable(),
};
const periodSpend = z.object({ period: z.enum(['day', 'week', 'month']), spent_micros: z.int(), spent: z.string(), limit_micros: z.int(), limit: z.string(), resets_at: z.string() });
export const keyJson = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  role,
  team: teamRef,
  state: z.enum(['active', 'blocked', 'expired', 'revoked']),
  ...policyJson,
  priority: z.string().nullable(),
  allowed_cidrs: z.array(z.string()),
  tags: z.array(z.string()),
  metadata: z.record(z.string(), z.string()),
  expires_at: isoOrNull,
  cap_max_tokens: z.boolean(),
  blocked: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  revoked_at: isoOrNull,
  rotated_at: isoOrNull,
  last_used_at: isoOrNull,
  spend: periodSpend.nullable().optional().describe("spend in the period of the key's shortest own budget: absent without a ledger, null when the key has no budget of its own"),
});
export const teamJson = z.object({ id: z.string(), name: z.string(), ...policyJson, created_at: z.string(), updated_at: z.string() });
export const auditJson = z.object({
  seq: z.int(),
  at: z.string(),
  actor_id: z.string(),
  actor_name: z.string(),
  action: z.string(),
  object: z.string(),
  before: z.unknown(),
  after: z.unknown(),
  count: z.int(),
  request_id: z.string().nullable(),
  source_ip: z.string().nullable(),
  prev_hash: z.string(),
  hash: z.string(),
});
const page = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), next_cursor: z.string().nullable() });
export const keyPage = page(keyJson);
export const teamPage = page(teamJson);
export const auditPage = page(auditJson);
export const createdKeyJson = z.object({
  key: keyJson,
  secret: z.string().describe('shown in this answer only (and to a retry with the same Idempotency-Key within 24 h)'),
});
export const rotatedKeyJson = z.object({ key: keyJson, secret: z.string(), grace_until: z.string(), replayed: z.boolean() });
export const revokedKeyJson = z.object({ key: keyJson, already_revoked: z.boolean() });
export const verifyJson = z.object({ ok: z.boolean(), rows: z.int(), broken_seq: z.int().nullable(), reason: z.string().nullable() });
export const usageJson = z.looseObject({ by: z.string(), rows: z.array(z.looseObject({})), totals: z.array(z.looseObject({})) });
export const modelsJson = z.object({ data: z.array(z.looseObject({ id: z.string(), object: z.literal('model'), owned_by: z.string() })) });
export const routesJson = z.object({
  models: z.array(z.looseObject({ name: z.string(), aliases: z.array(z.string()), deployments: z.array(z.looseObject({ provider: z.string(), upstream_model: z.string() })) })),
  tiers: z.record(z.string(), z.string()),
  patterns: z.array(z.object({ glob: z.string(), model: z.string() })),
});
export const openApiJson = z.looseObject({ openapi: z.string(), paths: z.looseObject({}) });
export const errorJson = z.object({ error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }) });

/** Every field optional and nullable: a PATCH body. */
function nullable<T extends Record<string, z.ZodType>>(shape: T): { [K in keyof T]: z.ZodOptional<z.ZodNullable<T[K]>> } {
  const out: Record<string, z.ZodType> = {};
  for (const [name, schema] of Object.entries(shape)) out[name] = (schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema).nullable().optional();
  return out as { [K in keyof T]: z.ZodOptional<z.ZodNullable<T[K]>> };
}
