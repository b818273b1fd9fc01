// Load failures reach clients (the load API's answer, the repository index, readiness reasons): where the
// repositories live on the server is not theirs to see, so each path is shown relative to its repository.
import { realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { HerdError } from '../../core/errors.ts';

/** A rewriter of messages for these repositories: `<repository>/simple/1/model.onnx` becomes `simple/1/model.onnx`. */
export function createRepositoryPathRedactor(repositories: readonly string[]): (message: string) => string {
  const roots = new Set<string>();
  for (const repo of repositories) {
    const root = resolve(repo);
    roots.add(root);
    try {
      roots.add(realpathSync(root));
    } catch {
      // A repository that does not exist (yet) has no other spelling.
    }
  }
  // Longest first, so a repository nested in another is matched whole.
  const ordered = [...roots].filter((r) => r !== sep).sort((a, b) => b.length - a.length);
  return (message) => {
    let out = message;
    for (const root of ordered) out = out.replaceAll(`${root}${sep}`, '').replaceAll(root, '<model repository>');
    return out;
  };
}

/** The same error with its message redacted (code, param and cause kept). */
export function redactError(error: HerdError, redact: (message: string) => string): HerdError {
  const message = redact(error.message);
  if (message === error.message) return error;
  return new HerdError(error.code, message, { param: error.param, cause: error, reason: error.reason, retryAfterSeconds: error.retryAfterSeconds });
}
