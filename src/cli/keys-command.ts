// `herd keys create|list|show|update|block|unblock|rotate|revoke`: gateway keys in the store named by
// --db, else herd.yaml's auth.db, else ./data/herd.db, through the AdminService the admin API uses.
// A key is named by its name (team/name), public id or prefix; a new secret goes to stdout alone.
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type { KeyJson } from '../gateway/admin/convert-admin-json.ts';
import { parseDurationMs, parseKeyFields, parseKeyPatch } from '../gateway/admin/parse-admin-input.ts';
import { formatKeyDetails, formatKeysTable, formatModels } from './format-admin-output.ts';
import { type AdminCliFlags, type AdminCliIo, processIo, resolveKeyStoreLocation, sqliteStorePath, withAdminService } from './open-admin-service.ts';
import { addKeyOptions, formatPolicyLimits, type KeyPolicyFlags, parseKeyPolicyFlags } from './parse-policy-flags.ts';

export { resolveKeyStoreLocation };
export type KeysFlags = AdminCliFlags;
export type KeysIo = AdminCliIo;

export interface KeysCreateFlags extends AdminCliFlags, KeyPolicyFlags {
  name: string;
}

export interface KeysListFlags extends AdminCliFlags {
  json?: boolean;
  team?: string;
  search?: string;
  all?: boolean;
}

export interface KeysRotateFlags extends AdminCliFlags {
  grace?: string;
  rotationId?: string;
}

const withStore = (command: Command) =>
  command
    .option('--config <file>', 'herd.yaml whose auth.db (and ledger, for spend) to use (default: ./herd.yaml when present)')
    .option('--db <location>', 'key store, overriding herd.yaml: a SQLite file or postgres://… (default ./data/herd.db)');

const REF = ['<key>', 'the key: its name (team/name when names repeat), public id (hk_…), prefix, or the secret itself'] as const;

export function registerKeysCommand(program: Command, io: AdminCliIo = processIo): void {
  const keys = program.command('keys').description('manage gateway keys: limits, budgets, roles, rotation (the admin API does the same)');
  addKeyOptions(withStore(keys.command('create')), false)
    .description('create a key; its secret is printed once and cannot be shown again')
    .requiredOption('--name <name>', 'who or what will use the key (unique in its team)')
    .action((flags: KeysCreateFlags) => runKeysCreate(flags, io));
  withStore(keys.command('list'))
    .description('list keys with their team, spend this period, last use and expiry (never their secrets)')
    .option('--team <team>', "only this team's keys")
    .option('--search <text>', 'only names containing the text')
    .option('--all', 'revoked keys too')
    .option('--json', 'print JSON (the shape of GET /admin/v1/keys)')
    .action((flags: KeysListFlags) => runKeysList(flags, io));
  withStore(keys.command('show'))
    .description("one key's settings, state and spend")
    .argument(...REF)
    .option('--json', 'print JSON')
    .action((ref: string, flags: KeysListFlags) => runKeysShow(ref, flags, io));
  addKeyOptions(withStore(keys.command('update')), true)
    .description('change a key: only the flags given')
    .argument(...REF)
    .option('--name <name>', 'a new name')
    .action((ref: string, flags: KeyPolicyFlags & AdminCliFlags) => runKeysUpdate(ref, flags, io));
  for (const blocked of [true, false]) {
    withStore(keys.command(blocked ? 'block' : 'unblock'))
      .description(blocked ? 'refuse a key until it is unblocked (it keeps its secret, spend and settings)' : 'accept a blocked key again')
      .argument(...REF)
      .action((ref: string, flags: AdminCliFlags) => runKeysBlock(ref, blocked, flags, io));
  }
  withStore(keys.command('rotate'))
    .description('a new secret for the key (same id, spend and budgets); the old one works through the grace period')
    .argument(...REF)
    .option('--grace <duration>', 'how long the old secret keeps working: 30m, 24h, 7d, or 0s', '24h')
    .option('--rotation-id <id>', 'rotating again with the same id (16+ random characters) prints the same secret instead of minting another')
    .action((ref: string, flags: KeysRotateFlags) => runKeysRotate(ref, flags, io));
  withStore(keys.command('revoke'))
    .description('revoke a key for good; running servers refuse it within a second')
    .argument(...REF)
    .action((ref: string, flags: AdminCliFlags) => runKeysRevoke(ref, flags, io));
}

export async function runKeysCreate(flags: KeysCreateFlags, io: AdminCliIo): Promise<void> {
  // Flags are checked before any store is opened (or created).
  const fields = parseKeyFields({ ...parseKeyPolicyFlags(flags, false), name: flags.name }, (io.now ?? Date.now)());
  await withAdminService(flags, io, false, async ({ service, ctx, where }) => {
    const { key, secret } = await service.createKey(ctx, fields);
    io.stderr(`Created key ${key.id} '${key.name}' (${describeKey(key)}) in ${where}:\n`);
    io.stdout(`${secret}\n`);
    io.stderr('Store this key now: it is shown only once. Herd keeps only a hash of it and cannot show it again.\n');
  });
}

export async function runKeysList(flags: KeysListFlags, io: AdminCliIo): Promise<void> {
  const path = sqliteStorePath(flags, io.env);
  if (path !== undefined && !existsSync(path)) {
    if (flags.json) io.stdout('[]\n');
    else io.stdout(`No keys yet (${path} does not exist). Create one with: herd keys create --name NAME\n`);
    return;
  }
  await withAdminService(flags, io, true, async ({ service, ctx, where }) => {
    const keys: KeyJson[] = [];
    let cursor: string | undefined;
    do {
      const page = await service.listKeys(ctx, { team: flags.team, search: flags.search, includeRevoked: flags.all === true, limit: 500, cursor });
      keys.push(...page.data);
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    if (flags.json) io.stdout(`${JSON.stringify(keys, null, 2)}\n`);
    else if (keys.length === 0)
      io.stdout(`No keys in ${where}${flags.all ? '' : ' (revoked ones are left out: --all shows them)'}. Create one with: herd keys create --name NAME\n`);
    else io.stdout(`${formatKeysTable(keys)}\n`);
  });
}

export async function runKeysShow(ref: string, flags: KeysListFlags, io: AdminCliIo): Promise<void> {
  await withAdminService(flags, io, true, async ({ service, ctx }) => {
    const key = await service.getKey(ctx, ref);
    io.stdout(flags.json ? `${JSON.stringify(key, null, 2)}\n` : `${formatKeyDetails(key)}\n`);
  });
}

export async function runKeysUpdate(ref: string, flags: KeyPolicyFlags & AdminCliFlags, io: AdminCliIo): Promise<void> {
  const patch = parseKeyPatch(parseKeyPolicyFlags(flags, true), (io.now ?? Date.now)());
  await withAdminService(flags, io, true, async ({ service, ctx }) => {
    const key = await service.updateKey(ctx, ref, patch);
    io.stdout(`Updated key ${key.id} '${key.name}' (${describeKey(key)}). Running servers apply it within a second.\n`);
  });
}

export async function runKeysBlock(ref: string, blocked: boolean, flags: AdminCliFlags, io: AdminCliIo): Promise<void> {
  await withAdminService(flags, io, true, async ({ service, ctx }) => {
    const key = await service.setBlocked(ctx, ref, blocked);
    io.stdout(
      blocked
        ? `Blocked key ${key.id} '${key.name}': running servers refuse it within a second, until \`herd keys unblock ${key.name}\`.\n`
        : `Unblocked key ${key.id} '${key.name}' (now ${key.state}).\n`,
    );
  });
}

export async function runKeysRotate(ref: string, flags: KeysRotateFlags, io: AdminCliIo): Promise<void> {
  const graceMs = parseDurationMs(flags.grace ?? '24h', '--grace');
  await withAdminService(flags, io, true, async ({ service, ctx }) => {
    const rotated = await service.rotateKey(ctx, ref, { graceMs, rotationId: flags.rotationId });
    const { key } = rotated;
    io.stderr(
      `${rotated.replayed ? 'Rotation already done with this --rotation-id; its secret again' : 'Rotated key'} ${key.id} '${key.name}': ` +
        `the old secret works until ${rotated.graceUntil.toISOString()}, then fails saying it was rotated. The new secret:\n`,
    );
    io.stdout(`${rotated.secret}\n`);
    io.stderr('Store it now: it is shown only once. Spend and budget windows stay with the key.\n');
  });
}

export async function runKeysRevoke(ref: string, flags: AdminCliFlags, io: AdminCliIo): Promise<void> {
  await withAdminService(flags, io, true, async ({ service, ctx }) => {
    const { key, alreadyRevoked } = await service.revokeKey(ctx, ref);
    if (alreadyRevoked) io.stdout(`Key ${key.id} '${key.name}' (${key.prefix}…) was already revoked on ${(key.revoked_at ?? '').slice(0, 16).replace('T', ' ')} UTC.\n`);
    else io.stdout(`Revoked key ${key.id} '${key.name}' (${key.prefix}…). Running servers refuse it within a second.\n`);
  });
}

/** `team research, role client; models: *; rpm 60, 12.50/day`. */
function describeKey(key: KeyJson): string {
  const limits = [formatPolicyLimits(key), key.priority ? `priority ${key.priority}` : ''].filter((p) => p !== '').join(', ');
  const who = [key.team ? `team ${key.team.name}` : undefined, key.role !== 'client' ? `role ${key.role}` : undefined].filter((p) => p !== undefined);
  return [...(who.length > 0 ? [who.join(', ')] : []), `models: ${formatModels(key.allowed_models)}${limits ? `; ${limits}` : ''}`].join('; ');
}
