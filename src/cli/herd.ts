// The `herd` command line. Errors print one clear line and exit 1, never a stack trace.
import { Command } from 'commander';
import { HerdError } from '../core/errors.ts';
import { registerBenchCommand } from './bench-command.ts';
import { registerCheckCommand } from './check-command.ts';
import { registerCostCommand } from './cost-command.ts';
import { registerKeysCommand } from './keys-command.ts';
import { registerServeCommand } from './serve-command.ts';
import { registerUsageCommand } from './usage-command.ts';

const program = new Command('herd').description('Herd: Triton-compatible model serving and an LLM gateway in one server');
registerServeCommand(program);
registerKeysCommand(program);
registerBenchCommand(program);
registerCheckCommand(program);
registerUsageCommand(program);
registerCostCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const message = err instanceof HerdError ? err.message : err instanceof Error ? err.message : String(err);
  process.stderr.write(`herd: ${message}\n`);
  process.exit(1);
}
