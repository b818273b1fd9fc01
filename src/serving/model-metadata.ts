// Model metadata as KServe v2 reports it: config dims with a leading -1 for batching models.
import { mapConfigTypeToDataType } from '../core/datatype.ts';
import type { ModelConfig } from './model-config/model-config.ts';

export interface TensorMetadata {
  name: string;
  datatype: string;
  shape: number[];
}
export interface ModelMetadata {
  name: string;
  versions: string[];
  platform: string;
  inputs: TensorMetadata[];
  outputs: TensorMetadata[];
}

export function createModelMetadata(config: ModelConfig, versions: readonly number[]): ModelMetadata {
  const batchDim = config.max_batch_size > 0 ? [-1] : [];
  const describe = (t: { name: string; data_type: string; dims: number[] }): TensorMetadata => ({
    name: t.name,
    datatype: mapConfigTypeToDataType(t.data_type) ?? t.data_type,
    shape: [...batchDim, ...t.dims],
  });
  return {
    name: config.name,
    versions: versions.map(String),
    platform: config.platform || config.backend,
    inputs: config.input.map(describe),
    outputs: config.output.map(describe),
  };
}
