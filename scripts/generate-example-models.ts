// Writes the example models (config.pbtxt + 1/model.onnx) into a model repository, deterministically.
// Usage: npx tsx scripts/generate-example-models.ts [outDir] [--with-mlp]   (default outDir: examples/model_repository)
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXAMPLE_MODELS, type ExampleModel } from './onnx/example-models.ts';

export interface GenerateOptions {
  outDir: string;
  /** Also generate opt-in models (mlp_2048, ~27 MB). */
  withOptIn?: boolean;
  /** Restrict to these model names (default: every non-opt-in model, plus opt-in ones when asked). */
  only?: string[];
}

export type FileOutcome = 'written' | 'unchanged';

export interface GeneratedModel {
  name: string;
  onnxPath: string;
  configPath: string;
  onnx: FileOutcome;
  config: FileOutcome;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Writes only when the content hash differs, via a temp file + rename so a reader never sees half a model. */
async function writeIfChanged(path: string, bytes: Uint8Array): Promise<FileOutcome> {
  const existing = await readIfExists(path);
  if (existing && existing.length === bytes.length && sha256(existing) === sha256(bytes)) return 'unchanged';
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, bytes);
  await rename(tmp, path);
  return 'written';
}

function selectModels(options: GenerateOptions): ExampleModel[] {
  if (options.only) {
    const unknown = options.only.filter((n) => !EXAMPLE_MODELS.some((m) => m.name === n));
    if (unknown.length > 0) throw new Error(`unknown example model(s): ${unknown.join(', ')}`);
    return EXAMPLE_MODELS.filter((m) => options.only!.includes(m.name));
  }
  return EXAMPLE_MODELS.filter((m) => !m.optIn || options.withOptIn);
}

export async function generateExampleModels(options: GenerateOptions): Promise<GeneratedModel[]> {
  const results: GeneratedModel[] = [];
  for (const model of selectModels(options)) {
    const modelDir = join(options.outDir, model.name);
    const onnxPath = join(modelDir, '1', 'model.onnx');
    const configPath = join(modelDir, 'config.pbtxt');
    // Model file first: a config without its model would make the repository report a failed load.
    const onnx = await writeIfChanged(onnxPath, model.buildOnnx());
    const config = await writeIfChanged(configPath, Buffer.from(model.configPbtxt, 'utf8'));
    results.push({ name: model.name, onnxPath, configPath, onnx, config });
  }
  return results;
}

function parseArgs(argv: string[]): GenerateOptions {
  let outDir: string | undefined;
  let withOptIn = false;
  for (const arg of argv) {
    if (arg === '--with-mlp') withOptIn = true;
    else if (arg === '-h' || arg === '--help') {
      console.log('usage: generate-example-models [outDir] [--with-mlp]');
      process.exit(0);
    } else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}`);
    else if (outDir === undefined) outDir = arg;
    else throw new Error(`unexpected argument ${arg}`);
  }
  return { outDir: resolve(outDir ?? 'examples/model_repository'), withOptIn };
}

async function main(): Promise<void> {
  const started = performance.now();
  const options = parseArgs(process.argv.slice(2));
  const results = await generateExampleModels(options);
  const changed = results.filter((r) => r.onnx === 'written' || r.config === 'written');
  const ms = (performance.now() - started).toFixed(0);
  const summary =
    changed.length === 0
      ? 'up to date'
      : changed.map((r) => `${r.name} (${[r.onnx === 'written' && 'model.onnx', r.config === 'written' && 'config.pbtxt'].filter(Boolean).join(', ')})`).join('; ');
  console.log(`example models in ${options.outDir}: ${summary} [${ms} ms]`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
