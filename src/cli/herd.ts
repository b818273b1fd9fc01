// The `herd` command line. Errors print one clear line and exit 1, never a stack trace.
import { HerdError } from '../core/errors.ts';
import { createHerdProgram } from './create-herd-program.ts';

const program = createHerdProgram();

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const message = err instanceof HerdError ? err.message : err instanceof Error ? err.message : String(err);
  process.stderr.write(`herd: ${message}\n`);
  process.exit(1);
}
