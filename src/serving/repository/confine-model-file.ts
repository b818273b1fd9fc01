// The one check every file a model config names goes through: it must resolve (symlinks followed) inside
// the model's folder, so a config, on disk or from the load API, cannot make Herd read or run files elsewhere.
import { readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { HerdError } from '../../core/errors.ts';

export interface ConfinedFile {
  /** The model's folder, as the repository scan found it. */
  modelPath: string;
  modelName: string;
  /** Names the setting in the refusal: `default_model_filename`, `EXECUTION_ENV_PATH`, ... */
  field: string;
  /** The value as the config wrote it; the refusal quotes it, never the resolved absolute path. */
  value: string;
  /** The path the value names, when it is not the value itself (variables expanded). */
  path?: string;
  /** Where a relative path starts: a version folder, its warmup folder, the model folder. */
  base: string;
  /** serving.allow_files_outside_model_dir, for on-disk configs only: a load-API override never gets it. */
  allowOutside: boolean;
}

/** The absolute path of the file, after refusing (INVALID_ARG) one whose real location is outside the model folder. */
export function confineModelFile(file: ConfinedFile): string {
  const path = resolve(file.base, file.path ?? file.value);
  if (file.allowOutside) return path;
  const root = realPath(file.modelPath);
  // Lexically first (a path that does not exist yet), then where symlinks really lead.
  if (!isInside(resolve(file.modelPath), path) || !isInside(root, realPath(path))) {
    throw new HerdError(
      'INVALID_ARG',
      `model '${file.modelName}': ${file.field} '${file.value}' resolves outside the model directory; files a model config names must be inside the model's folder (an operator can allow outside files for on-disk configs with serving.allow_files_outside_model_dir)`,
      { param: file.field },
    );
  }
  return path;
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** realpath of the longest existing prefix, with the rest appended: a missing file is judged by the folder it would be in. */
function realPath(path: string, depth = 0): string {
  try {
    return realpathSync(path);
  } catch {
    // A dangling symlink is judged by where it points, so its target cannot appear outside later.
    const target = depth < 40 ? readLink(path) : undefined;
    if (target !== undefined) return realPath(resolve(dirname(path), target), depth + 1);
    const parent = dirname(path);
    if (parent === path) return path;
    return join(realPath(parent, depth + 1), basename(path));
  }
}

function readLink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
