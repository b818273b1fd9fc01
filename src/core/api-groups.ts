// Triton's API groups (health, metadata, inference, ...) and who may call each: open, the master key, or
// Triton's restricted-API header. One guard per transport decides; each transport words the refusal.
import { createHash, timingSafeEqual } from 'node:crypto';
import { HerdError } from './errors.ts';

/** Triton's names (server src/restricted_features.h), in its order. */
export const API_GROUPS = ['health', 'metadata', 'inference', 'shared-memory', 'model-config', 'model-repository', 'statistics', 'trace', 'logging'] as const;

export type ApiGroup = (typeof API_GROUPS)[number];

/** open: anyone; master: the master key (Authorization: Bearer or x-api-key); header: Triton's `<header>: <value>`. */
export type ApiGroupRule = { kind: 'open' } | { kind: 'master' } | { kind: 'header'; header: string; value: string };

/** Groups that change the server or reach its files: the master key by default whenever one is set. */
export const MASTER_BY_DEFAULT: readonly ApiGroup[] = ['model-repository', 'shared-memory', 'trace', 'logging'];

/** Why a request was refused: a missing or wrong Triton header (the transport words it as Triton does), else a HerdError. */
export type ApiGroupRefusal = { kind: 'header'; header: string } | HerdError;

export interface ApiGroupGuard {
  /** Undefined when the request may use `group`; `read` returns a header (lower-case name) or undefined. */
  check(group: ApiGroup, read: (name: string) => string | undefined): ApiGroupRefusal | undefined;
  /** False when the group is open to everyone (the transport skips reading anything). */
  isRestricted(group: ApiGroup): boolean;
}

export function isApiGroup(name: string): name is ApiGroup {
  return (API_GROUPS as readonly string[]).includes(name);
}

/**
 * `rules`: every group's rule (absent: open). `masterKey`: the master key's value, when set (a `master`
 * group without one refuses everyone: fail closed). Undefined when every group is open.
 */
export function createApiGroupGuard(rules: Partial<Record<ApiGroup, ApiGroupRule>>, masterKey: string | undefined): ApiGroupGuard | undefined {
  const masterDigest = masterKey ? digest(masterKey) : undefined;
  const table = new Map<ApiGroup, ApiGroupRule>();
  for (const group of API_GROUPS) {
    const rule = rules[group];
    if (rule !== undefined && rule.kind !== 'open') table.set(group, rule);
  }
  // Nothing restricted: no guard, so the transports add no check at all.
  if (table.size === 0) return undefined;
  return {
    isRestricted: (group) => table.has(group),
    check(group, read) {
      const rule = table.get(group);
      if (rule === undefined || rule.kind === 'open') return undefined;
      if (rule.kind === 'header') return read(rule.header) === rule.value ? undefined : { kind: 'header', header: rule.header };
      const key = readRequestKey(read);
      if (key === undefined) {
        return new HerdError('UNAUTHENTICATED', `The ${group} API needs the master key: send 'Authorization: Bearer <master key>' or 'x-api-key: <master key>'.`);
      }
      if (masterDigest === undefined || !timingSafeEqual(digest(key), masterDigest)) {
        return new HerdError('PERMISSION_DENIED', `The ${group} API needs the master key; the key sent is not it.`, { reason: 'admin_only' });
      }
      return undefined;
    },
  };
}

/** `Authorization: Bearer <key>` (scheme case-insensitive), else `x-api-key`. */
function readRequestKey(read: (name: string) => string | undefined): string | undefined {
  const match = /^\s*bearer\s+(.*?)\s*$/is.exec(read('authorization') ?? '');
  if (match?.[1]) return match[1];
  const key = read('x-api-key')?.trim();
  return key ? key : undefined;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * tritonserver's `--http-restricted-api` / `--grpc-restricted-protocol` value, `<group>[,<group>...]:<key>=<value>`,
 * as rules; `prefix` is put before the key (gRPC's `triton-grpc-protocol-`). Errors as Triton's parser words them.
 */
export function parseRestrictedApiOption(option: string, text: string, prefix: string, into: Partial<Record<ApiGroup, ApiGroupRule>>, seen: Set<ApiGroup>): void {
  const colon = text.lastIndexOf(':');
  const equals = text.indexOf('=', colon + 1);
  if (colon <= 0 || equals < 0 || equals === colon + 1) {
    throw new HerdError('INVALID_ARG', `${option} expects <groups>:<key>=<value>, e.g. model-repository,shared-memory:admin-key=secret, got '${text}'`);
  }
  const key = text
    .slice(colon + 1, equals)
    .trim()
    .toLowerCase();
  const value = text.slice(equals + 1);
  for (const name of text
    .slice(0, colon)
    .split(',')
    .map((g) => g.trim())) {
    const kind = option.startsWith('--grpc') ? 'protocol' : 'api';
    if (!isApiGroup(name)) throw new HerdError('INVALID_ARG', `${option}: unknown restricted ${kind} '${name}' (known: ${API_GROUPS.join(', ')})`);
    if (seen.has(name)) throw new HerdError('INVALID_ARG', `${option}: restricted ${kind} '${name}' can not be specified in multiple config groups`);
    seen.add(name);
    into[name] = { kind: 'header', header: `${prefix}${key}`, value };
  }
}

export interface ApiGroupSettings {
  /** herd.yaml `server.restricted_api`: group → `master`, `open` or `<header>=<value>`; both transports. */
  configured: Readonly<Record<string, string>>;
  /** tritonserver flag values for this transport (`--http-restricted-api` or `--grpc-restricted-protocol`). */
  flags: readonly string[];
  transport: 'http' | 'grpc';
  /** Whether a master key is set: then model-repository, shared-memory, trace and logging need it by default. */
  masterKeySet: boolean;
}

/** The rule of every group on one transport: defaults, then herd.yaml, then the tritonserver flags. */
export function resolveApiGroupRules(settings: ApiGroupSettings): Partial<Record<ApiGroup, ApiGroupRule>> {
  const rules: Partial<Record<ApiGroup, ApiGroupRule>> = {};
  if (settings.masterKeySet) for (const group of MASTER_BY_DEFAULT) rules[group] = { kind: 'master' };
  const prefix = settings.transport === 'grpc' ? 'triton-grpc-protocol-' : '';
  for (const [group, text] of Object.entries(settings.configured)) {
    if (!isApiGroup(group)) throw new HerdError('INVALID_ARG', `server.restricted_api: unknown API group '${group}' (known: ${API_GROUPS.join(', ')})`);
    rules[group] = parseConfiguredRule(group, text, prefix);
  }
  const option = settings.transport === 'grpc' ? '--grpc-restricted-protocol' : '--http-restricted-api';
  const seen = new Set<ApiGroup>();
  for (const flag of settings.flags) parseRestrictedApiOption(option, flag, prefix, rules, seen);
  return rules;
}

function parseConfiguredRule(group: ApiGroup, text: string, prefix: string): ApiGroupRule {
  if (text === 'open' || text === 'master') return { kind: text };
  const equals = text.indexOf('=');
  if (equals <= 0) throw new HerdError('INVALID_ARG', `server.restricted_api.${group} must be master, open or <header>=<value>, got '${text}'`);
  return { kind: 'header', header: `${prefix}${text.slice(0, equals).trim().toLowerCase()}`, value: text.slice(equals + 1) };
}
