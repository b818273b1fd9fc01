// `herd teams create|list|show|update|delete`: teams (a budget, limits and models their keys share; the
// tighter of key and team wins) in the key store, through the AdminService the admin API uses.
import type { Command } from 'commander';
import type { convertTeamToJson } from '../gateway/admin/convert-admin-json.ts';
import { parseTeamFields, parseTeamPatch } from '../gateway/admin/parse-admin-input.ts';
import { formatModels, formatTable, formatTime } from './format-admin-output.ts';
import { type AdminCliFlags, type AdminCliIo, processIo, withAdminService } from './open-admin-service.ts';
import { addPolicyOptions, formatPolicyLimits, type PolicyFlags, parsePolicyFlags } from './parse-policy-flags.ts';

type TeamJson = ReturnType<typeof convertTeamToJson>;

export interface TeamsFlags extends AdminCliFlags, PolicyFlags {
  json?: boolean;
  search?: string;
}

const withStore = (command: Command) =>
  command
    .option('--config <file>', 'herd.yaml whose auth.db to use (default: ./herd.yaml when present)')
    .option('--db <location>', 'key store, overriding herd.yaml: a SQLite file or postgres://… (default ./data/herd.db)');

export function registerTeamsCommand(program: Command, io: AdminCliIo = processIo): void {
  const teams = program.command('teams').description('manage teams: a budget, limits and models their keys share (the tighter of key and team wins)');
  addPolicyOptions(withStore(teams.command('create')), false)
    .description('create a team')
    .requiredOption('--name <name>', 'the team name (unique)')
    .action((flags: TeamsFlags & { name: string }) => runTeamsCreate(flags, io));
  withStore(teams.command('list'))
    .description('list teams')
    .option('--search <text>', 'only names containing the text')
    .option('--json', 'print JSON (the shape of GET /admin/v1/teams)')
    .action((flags: TeamsFlags) => runTeamsList(flags, io));
  withStore(teams.command('show'))
    .description("one team's settings")
    .argument('<team>', 'team name or id (tm_…)')
    .option('--json', 'print JSON')
    .action((ref: string, flags: TeamsFlags) => runTeamsShow(ref, flags, io));
  addPolicyOptions(withStore(teams.command('update')), true)
    .description('change a team: only the flags given')
    .argument('<team>', 'team name or id (tm_…)')
    .option('--name <name>', 'a new name')
    .action((ref: string, flags: TeamsFlags) => runTeamsUpdate(ref, flags, io));
  withStore(teams.command('delete'))
    .description('delete a team (refused while it has keys that are not revoked)')
    .argument('<team>', 'team name or id (tm_…)')
    .action((ref: string, flags: AdminCliFlags) => runTeamsDelete(ref, flags, io));
}

export async function runTeamsCreate(flags: TeamsFlags & { name: string }, io: AdminCliIo): Promise<void> {
  const fields = parseTeamFields({ ...parsePolicyFlags(flags, false), name: flags.name });
  await withAdminService(flags, io, false, async ({ service, ctx, where }) => {
    const team = await service.createTeam(ctx, fields);
    io.stdout(`Created team ${team.id} '${team.name}' (${describeTeam(team)}) in ${where}. Add keys with: herd keys create --name NAME --team ${team.name}\n`);
  });
}

export async function runTeamsList(flags: TeamsFlags, io: AdminCliIo): Promise<void> {
  await withAdminService(flags, io, false, async ({ service, ctx, where }) => {
    const teams: TeamJson[] = [];
    let cursor: string | undefined;
    do {
      const page = await service.listTeams(ctx, { search: flags.search, limit: 500, cursor });
      teams.push(...page.data);
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    if (flags.json) io.stdout(`${JSON.stringify(teams, null, 2)}\n`);
    else if (teams.length === 0) io.stdout(`No teams in ${where}. Create one with: herd teams create --name NAME\n`);
    else {
      const rows = teams.map((t) => [t.id, t.name, formatModels(t.allowed_models), formatPolicyLimits(t) || '-', t.timezone, formatTime(t.created_at)]);
      io.stdout(`${formatTable(['ID', 'Name', 'Models', 'Limits and budgets', 'Time zone', 'Created'], rows)}\n`);
    }
  });
}

export async function runTeamsShow(ref: string, flags: TeamsFlags, io: AdminCliIo): Promise<void> {
  await withAdminService(flags, io, true, async ({ service, ctx }) => {
    const team = await service.getTeam(ctx, ref);
    if (flags.json) {
      io.stdout(`${JSON.stringify(team, null, 2)}\n`);
      return;
    }
    const keys = await service.listKeys(ctx, { team: team.id, limit: 500 });
    const names = keys.data.map((k) => k.name).join(', ') || '(none)';
    io.stdout(
      `id         ${team.id}\nname       ${team.name}\nmodels     ${formatModels(team.allowed_models)}\nlimits     ${formatPolicyLimits(team) || '-'}\ntime zone  ${team.timezone}\n` +
        `alerts     ${team.alert_thresholds.map((t) => `${t}%`).join(', ') || '-'}\nkeys       ${names}${keys.next_cursor ? ', …' : ''}\ncreated    ${formatTime(team.created_at)}\n`,
    );
  });
}

export async function runTeamsUpdate(ref: string, flags: TeamsFlags, io: AdminCliIo): Promise<void> {
  const patch = parseTeamPatch(parsePolicyFlags(flags, true));
  await withAdminService(flags, io, true, async ({ service, ctx }) => {
    const team = await service.updateTeam(ctx, ref, patch);
    io.stdout(`Updated team ${team.id} '${team.name}' (${describeTeam(team)}). Running servers apply it within a second.\n`);
  });
}

export async function runTeamsDelete(ref: string, flags: AdminCliFlags, io: AdminCliIo): Promise<void> {
  await withAdminService(flags, io, true, async ({ service, ctx }) => {
    const team = await service.deleteTeam(ctx, ref);
    io.stdout(`Deleted team ${team.id} '${team.name}'.\n`);
  });
}

function describeTeam(team: TeamJson): string {
  const limits = formatPolicyLimits(team);
  return `models: ${formatModels(team.allowed_models)}${limits ? `; ${limits}` : ''}`;
}
