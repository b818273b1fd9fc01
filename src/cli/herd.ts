// The `herd` command line. Errors print one clear line and exit 1, never a stack trace.
import { redactEnvValues } from '../config/interpolate-env.ts';
import { HerdError } from '../core/errors.ts';
import { createHerdProgram } from './create-herd-program.ts';

const program = createHerdProgram();

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const message = err instanceof HerdError ? err.message : err instanceof Error ? err.message : String(err);
  // Whatever failed, a value herd.yaml took from the environment (a key, a URL with a password) is not printed.
  process.stderr.write(`herd: ${redactEnvValues(message)}\n`);
  process.exit(1);
}
