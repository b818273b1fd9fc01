// Finds the models in one or more Triton model repositories: every sub-folder of a repository is a
// model. A name found in two repositories is reported with both paths instead of picking one.
import { readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { HerdError } from '../../core/errors.ts';

export interface ModelLocation {
  name: string;
  path: string;
}

export interface RepositoryScan {
  models: Map<string, ModelLocation>;
  /** Model name -> the problem that keeps it from loading (duplicate, unreadable repository, ...). */
  problems: Map<string, string>;
  /** Repository-level problems (a repository that does not exist). */
  errors: string[];
}

export function scanRepositories(repositories: readonly string[]): RepositoryScan {
  // Model name -> the repositories (index in `repositories`) holding it.
  const seen = new Map<string, number[]>();
  const errors: string[] = [];
  for (const [index, repo] of repositories.entries()) {
    const root = resolve(repo);
    let names: string[];
    try {
      names = readdirSync(root).filter((n) => !n.startsWith('.') && isDirectory(join(root, n)));
    } catch (err) {
      errors.push(`failed to read model repository '${root}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      continue;
    }
    for (const name of names) seen.set(name, [...(seen.get(name) ?? []), index]);
  }
  const models = new Map<string, ModelLocation>();
  const problems = new Map<string, string>();
  for (const [name, indexes] of [...seen].sort(([a], [b]) => a.localeCompare(b))) {
    // Named by their place in the list: the message reaches clients, who need not know server paths.
    if (indexes.length > 1) {
      problems.set(name, `model '${name}' exists in multiple model repositories: ${indexes.map((i) => `#${i + 1} (${basename(resolve(repositories[i] as string))})`).join(', ')}`);
    }
    models.set(name, { name, path: join(resolve(repositories[indexes[0] as number] as string), name) });
  }
  return { models, problems, errors };
}

/**
 * Throws unless every repository is a directory: at start, a missing repository is a mistake in the
 * command line, and Triton refuses to start on it (core model_repository_manager.cc Create,
 * "repository path is not a valid directory"; local.h IsDirectory, "failed to stat file <path>").
 * Later scans (poll mode) only report a repository that went away.
 */
export function validateRepositoryPaths(repositories: readonly string[]): void {
  for (const repo of repositories) {
    const root = resolve(repo);
    let directory: boolean;
    try {
      directory = statSync(root).isDirectory();
    } catch (err) {
      throw new HerdError(
        'INVALID_ARG',
        `failed to stat file ${root}: the model repository does not exist (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); check --model-repository / serving.model_repository`,
      );
    }
    if (!directory)
      throw new HerdError('INVALID_ARG', `repository path is not a valid directory: ${root} is a file; --model-repository takes the folder that holds the model folders`);
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
