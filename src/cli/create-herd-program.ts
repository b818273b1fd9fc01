// The `herd` command tree, built without parsing or starting anything: herd.ts runs it, and
// scripts/generate-configuration-docs.ts reads its commands and flags.
import { Command } from 'commander';
import { HERD_VERSION } from '../core/herd-version.ts';
import { registerAuditCommand } from './audit-command.ts';
import { registerBenchCommand } from './bench-command.ts';
import { registerCheckCommand } from './check-command.ts';
import { registerCostCommand } from './cost-command.ts';
import { registerKeysCommand } from './keys-command.ts';
import { registerMigrateCommand } from './migrate-command.ts';
import { registerServeCommand } from './serve-command.ts';
import { registerTeamsCommand } from './teams-command.ts';
import { registerUsageCommand } from './usage-command.ts';

export function createHerdProgram(): Command {
  const program = new Command('herd')
    .description('Herd: Triton-compatible model serving and an LLM gateway in one server')
    .version(HERD_VERSION, '-V, --version', "print Herd's version");
  registerServeCommand(program);
  registerKeysCommand(program);
  registerTeamsCommand(program);
  registerAuditCommand(program);
  registerBenchCommand(program);
  registerCheckCommand(program);
  registerMigrateCommand(program);
  registerUsageCommand(program);
  registerCostCommand(program);
  return program;
}
