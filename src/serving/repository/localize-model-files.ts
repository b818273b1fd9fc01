// A model built from the load API's `file:` parameters, as Triton's LocalizeRepoAgent builds it: the files are
// written into a fresh temporary folder (never the repository, never ./data) that lives as long as the model.
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { HerdError } from '../../core/errors.ts';
import { FILE_PREFIX } from './load-parameters.ts';

/** Linux's NAME_MAX: a longer path component cannot be created, and Triton refuses it at load. */
const NAME_MAX = 255;

export interface LocalizedModelFiles {
  /** The model folder, named after the model, inside the temporary folder. */
  modelPath: string;
  /** Rewrites the temporary folder out of a message: clients see `simple/1/model.onnx`, as for a repository. */
  redact(message: string): string;
  /** Deletes the temporary folder; idempotent. */
  remove(): void;
}

/**
 * Writes `files` (keyed `file:<relative path>`) into a new temporary model folder. Throws INVALID_ARG with
 * Triton's words for what Triton refuses (no config, a path leaving the folder, a name too long), having removed
 * whatever it wrote; the caller answers it as Triton does, a failure to poll the repository.
 */
export async function localizeModelFiles(modelName: string, files: ReadonlyMap<string, Buffer>, hasConfig: boolean): Promise<LocalizedModelFiles> {
  if (!hasConfig) throw new HerdError('INVALID_ARG', "Load parameter 'config' must be specified for model file override");
  const targets = [...files].map(([name, bytes]) => ({ name, bytes, path: confineFileParameter(name) }));
  const root = await mkdtemp(join(tmpdir(), 'herd-model-files-'));
  const modelPath = join(root, modelName);
  const remove = () => rmSync(root, { recursive: true, force: true });
  try {
    await mkdir(modelPath);
    // Asynchronously: a model file can be large, and the other models keep serving while it is written.
    for (const target of targets) await writeFileParameter(modelPath, target);
  } catch (err) {
    remove();
    throw err;
  }
  return { modelPath, remove, redact: (message) => message.replaceAll(`${root}${sep}`, '').replaceAll(root, '<model directory>') };
}

/** The relative path a `file:` parameter names, refused unless it stays inside the model folder. */
function confineFileParameter(name: string): string {
  const path = name.slice(FILE_PREFIX.length);
  if (path.includes('\0')) throw invalidFile(`Invalid file parameter '${name}': the path contains a NUL character`);
  const long = path.split(/[\\/]/).find((component) => Buffer.byteLength(component) > NAME_MAX);
  if (long !== undefined) throw invalidFile(`Invalid file parameter '${path}': File name too long (a path component is ${Buffer.byteLength(long)} bytes, NAME_MAX is ${NAME_MAX})`);
  // Judged against a stand-in root: the temporary folder does not exist yet, and its name is not the client's to see.
  const root = resolve(sep, 'model');
  const rel = relative(root, resolve(root, path));
  if (isAbsolute(path) || rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw invalidFile(`Invalid file parameter '${name}' with normalized path '${isAbsolute(path) ? path : rel || '.'}' must stay within model directory.`);
  }
  return rel;
}

async function writeFileParameter(modelPath: string, target: { name: string; bytes: Buffer; path: string }): Promise<void> {
  const file = join(modelPath, target.path);
  const dir = join(file, '..');
  try {
    const existing = await stat(dir).catch(() => undefined);
    if (existing !== undefined && !existing.isDirectory()) throw invalidFile(`Invalid file parameter '${target.name}', directory has been created as a file`);
    if (existing === undefined) await mkdir(dir, { recursive: true });
    await writeFile(file, target.bytes, { flag: 'wx' });
  } catch (err) {
    if (err instanceof HerdError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EEXIST' || code === 'EISDIR' ? 'a directory or file of that name has been created by another file parameter' : (code ?? (err as Error).message);
    throw invalidFile(`Invalid file parameter '${target.name}': ${why}`);
  }
}

function invalidFile(message: string): HerdError {
  return new HerdError('INVALID_ARG', message);
}
