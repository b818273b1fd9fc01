// Finds a version folder's model file, imports a fresh copy of it and reduces whatever it exports to
// one JsModel. Supported forms, checked in this order:
//   1. named exports: `export function execute(requests)` (+ optional initialize / finalize);
//   2. a default-exported class, instantiated with `new` (Triton's `class TritonPythonModel` style);
//   3. a default-exported object with those methods (also what `module.exports = {...}` gives).
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HerdError } from '../../../core/errors.ts';
import type { JsModel } from './model-api.ts';

/** Tried in order when the config sets no default_model_filename. */
export const DEFAULT_MODEL_FILENAMES = ['model.mjs', 'model.js'] as const;

export interface ModelFile {
  path: string;
  /** `<model>/<version>/<file>`: names the file in messages without exposing server paths to clients. */
  label: string;
}

export function resolveModelFile(versionPath: string, names: { modelName: string; version: number; defaultModelFilename: string }): ModelFile {
  const candidates = names.defaultModelFilename ? [names.defaultModelFilename] : [...DEFAULT_MODEL_FILENAMES];
  for (const file of candidates) {
    const path = join(versionPath, file);
    if (existsSync(path) && statSync(path).isFile()) return { path, label: `${names.modelName}/${names.version}/${file}` };
  }
  throw new HerdError('NOT_FOUND', `js model '${names.modelName}' version ${names.version}: no model file; looked for ${candidates.join(', ')}`);
}

let importSequence = 0;

/**
 * Imports the file as a new module instance. The query string defeats Node's module cache, so every
 * instance gets its own module-level state and a reload after the file changed runs the new code.
 * Only the model file itself is re-evaluated: modules it imports stay cached by Node, and each
 * reload keeps the old module in memory (Node cannot unload ES modules).
 */
export async function importJsModel(file: ModelFile): Promise<JsModel> {
  const url = `${pathToFileURL(file.path).href}?herd-load=${++importSequence}`;
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(url)) as Record<string, unknown>;
  } catch (err) {
    throw new HerdError('INTERNAL', `js model ${file.label}: failed to import: ${describeError(err)}`, { cause: err });
  }
  const model = toJsModel(namespace, file);
  for (const hook of ['initialize', 'finalize'] as const) {
    const member: unknown = model[hook];
    if (member !== undefined && typeof member !== 'function') {
      throw new HerdError('INVALID_ARG', `js model ${file.label}: '${hook}' is ${typeof member}, not a function`);
    }
  }
  return model;
}

function toJsModel(namespace: Record<string, unknown>, file: ModelFile): JsModel {
  if (typeof namespace.execute === 'function') return namespace as unknown as JsModel;
  const exported = namespace.default;
  if (typeof exported === 'function' && typeof (exported.prototype as { execute?: unknown } | undefined)?.execute === 'function') {
    let instance: unknown;
    try {
      instance = new (exported as new () => unknown)();
    } catch (err) {
      throw new HerdError('INTERNAL', `js model ${file.label}: constructor threw: ${describeError(err)}`, { cause: err });
    }
    return instance as JsModel;
  }
  if (typeof exported === 'object' && exported !== null && typeof (exported as { execute?: unknown }).execute === 'function') {
    return exported as JsModel;
  }
  throw new HerdError('INVALID_ARG', `js model ${file.label}: exports no execute(requests); export an execute function, or default-export a class or object with one`);
}

/** `Name: message` for Errors, the string form of anything else thrown. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
