// `herd audit list|verify`: the append-only audit log of key and team changes, admin sign-ins and
// refusals; verify walks its hash chain and exits 1 naming the first row that was edited or removed.
import type { Command } from 'commander';
import { HerdError } from '../core/errors.ts';
import type { convertAuditEventToJson } from '../gateway/admin/convert-admin-json.ts';
import { parseSince } from '../gateway/billing/usage-report.ts';
import { formatTable, formatTime } from './format-admin-output.ts';
import { type AdminCliFlags, type AdminCliIo, processIo, withAdminService } from './open-admin-service.ts';

type AuditJson = ReturnType<typeof convertAuditEventToJson>;

export interface AuditListFlags extends AdminCliFlags {
  since?: string;
  until?: string;
  action?: string;
  object?: string;
  actor?: string;
  limit?: string;
  json?: boolean;
}

const withStore = (command: Command) =>
  command
    .option('--config <file>', 'herd.yaml whose auth.db to use (default: ./herd.yaml when present)')
    .option('--db <location>', 'key store, overriding herd.yaml: a SQLite file or postgres://… (default ./data/herd.db)');

export function registerAuditCommand(program: Command, io: AdminCliIo = processIo): void {
  const audit = program.command('audit').description('the audit log: who changed which key or team, sign-ins, refusals; tamper-evident');
  withStore(audit.command('list'))
    .description('audit events, newest first')
    .option('--since <when>', 'a duration back from now (7d, 24h) or a date (2026-05-01)')
    .option('--until <when>', 'end (exclusive), same forms as --since')
    .option('--action <action>', 'e.g. key.create, key.rotate, team.update, admin.sign_in_failed')
    .option('--object <object>', 'e.g. key:hk_…, team:tm_…')
    .option('--actor <id>', 'a key id, master, or cli@host')
    .option('--limit <n>', 'at most this many events', '100')
    .option('--json', 'print JSON (the shape of GET /admin/v1/audit)')
    .action((flags: AuditListFlags) => runAuditList(flags, io));
  withStore(audit.command('verify'))
    .description("walk the log's hash chain; exit 1 naming the first row that does not match")
    .action((flags: AdminCliFlags) => runAuditVerify(flags, io));
}

export async function runAuditList(flags: AuditListFlags, io: AdminCliIo): Promise<void> {
  const max = Number(flags.limit ?? '100');
  if (!Number.isSafeInteger(max) || max < 1) throw new HerdError('INVALID_ARG', `--limit must be a whole number of at least 1, got '${flags.limit}'`, { param: '--limit' });
  await withAdminService(flags, io, true, async ({ service, ctx, now }) => {
    const events: AuditJson[] = [];
    let cursor: string | undefined;
    do {
      const page = await service.listAudit(ctx, {
        action: flags.action,
        object: flags.object,
        actorId: flags.actor,
        sinceMs: flags.since === undefined ? undefined : parseSince(flags.since, now),
        untilMs: flags.until === undefined ? undefined : parseSince(flags.until, now),
        limit: Math.min(500, max - events.length),
        cursor,
      });
      events.push(...page.data);
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined && events.length < max);
    if (flags.json) io.stdout(`${JSON.stringify(events, null, 2)}\n`);
    else if (events.length === 0) io.stdout('No audit events match.\n');
    else {
      const rows = events.map((e) => [
        String(e.seq),
        formatTime(e.at),
        `${e.actor_name}${e.actor_name === e.actor_id ? '' : ` (${e.actor_id})`}`,
        e.action,
        e.object,
        e.count > 1 ? `×${e.count}` : '',
        e.source_ip ?? '-',
      ]);
      io.stdout(`${formatTable(['Seq', 'Time', 'Actor', 'Action', 'Object', 'Count', 'Source'], rows)}\n`);
    }
  });
}

export async function runAuditVerify(flags: AdminCliFlags, io: AdminCliIo): Promise<void> {
  await withAdminService(flags, io, true, async ({ service, ctx, where }) => {
    const result = await service.verifyAudit(ctx);
    if (result.ok) {
      io.stdout(`The audit log in ${where} is intact: ${result.rows} rows, every hash and link matches.\n`);
      return;
    }
    io.stderr(`The audit log in ${where} was changed: row ${result.broken_seq} does not match (${result.reason}); the ${result.rows} rows before it match.\n`);
    (io.setExitCode ?? ((code: number) => (process.exitCode = code)))(1);
  });
}
