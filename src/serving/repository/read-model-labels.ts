// The label files of a model's outputs (label_filename), read at load for the classification extension:
// each resolved against the model directory and confined to it like every other file a config names.
import { readLabelFile } from '../classification.ts';
import type { ModelConfig } from '../model-config/model-config.ts';
import { confineModelFile } from './confine-model-file.ts';

/**
 * Labels of every output that names a label_filename, resolved against the model directory (not the
 * version folder), as Triton does; a path that resolves outside it is refused (confineModelFile) unless
 * the operator allows outside files for on-disk configs.
 */
export function readModelLabels(config: ModelConfig, modelPath: string, allowOutside = false): Map<string, readonly string[]> {
  const labels = new Map<string, readonly string[]>();
  for (const output of config.output) {
    if (!output.label_filename) continue;
    const path = confineModelFile({
      modelName: config.name,
      modelPath,
      field: `output '${output.name}' label_filename`,
      value: output.label_filename,
      base: modelPath,
      allowOutside,
    });
    labels.set(output.name, readLabelFile(path));
  }
  return labels;
}
