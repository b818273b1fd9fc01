// Finds a version's ONNX file, opens an InferenceSession on it and reads its input/output signature
// in the form the auto-complete and validation rules need (symbolic dims as -1).
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { HerdError, internal, notFound } from '../../../core/errors.ts';
import type { ModelConfig } from '../../model-config/model-config.ts';

export const DEFAULT_ONNX_FILENAME = 'model.onnx';

export interface OnnxIoInfo {
  name: string;
  /** ORT's element type string (`float32`, `string`, ...), or `non-tensor` for sequences and maps. */
  ortType: string;
  /** Dims as ORT reports them, symbolic or unknown dims as -1; empty for a scalar (or unknown rank). */
  dims: number[];
}

export interface OnnxSignature {
  inputs: OnnxIoInfo[];
  outputs: OnnxIoInfo[];
}

/**
 * `<versionPath>/<default_model_filename || model.onnx>`; like Triton, a directory there holds `model.onnx`
 * (models with external weight files ship as such a directory).
 */
export async function resolveOnnxModelPath(config: ModelConfig, versionPath: string): Promise<string> {
  const candidate = join(versionPath, config.default_model_filename || DEFAULT_ONNX_FILENAME);
  const info = await stat(candidate).catch(() => undefined);
  if (info?.isDirectory()) {
    const inner = join(candidate, DEFAULT_ONNX_FILENAME);
    if (
      await stat(inner).then(
        (s) => s.isFile(),
        () => false,
      )
    )
      return inner;
    throw notFound(`unable to find '${inner}' for model '${config.name}'`);
  }
  if (!info?.isFile()) throw notFound(`unable to find '${candidate}' for model '${config.name}'`);
  return candidate;
}

export async function createOnnxSession(config: ModelConfig, modelFile: string, options: ort.InferenceSession.SessionOptions): Promise<ort.InferenceSession> {
  try {
    return await ort.InferenceSession.create(modelFile, options);
  } catch (err) {
    if (err instanceof HerdError) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    throw internal(`unable to load model '${config.name}' from '${modelFile}': ${reason}`, { cause: err });
  }
}

function convertMetadata(meta: ort.InferenceSession.ValueMetadata): OnnxIoInfo {
  if (!meta.isTensor) return { name: meta.name, ortType: 'non-tensor', dims: [] };
  // Named (dim_param) and unnamed symbolic dims both arrive as strings; a negative number is also unknown.
  const dims = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : -1));
  return { name: meta.name, ortType: meta.type, dims };
}

export function readOnnxSignature(session: ort.InferenceSession): OnnxSignature {
  return {
    inputs: session.inputMetadata.map(convertMetadata),
    outputs: session.outputMetadata.map(convertMetadata),
  };
}
