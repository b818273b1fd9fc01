// Embeddings from a Triton model with a BYTES input and an FP32 output: one request per text, all sent
// at once so the model's dynamic batcher forms the batch; each answer's FP32 output is that text's vector.
import type { InferencePortModel } from '../../../core/inference-port.ts';
import { countTokens } from '../../protocol/usage-estimate.ts';
import type { EmbedRequest, EmbedResult } from '../provider.ts';
import { UpstreamError } from '../../protocol/upstream-error.ts';
import type { TritonCallOptions, TritonModelClient } from './triton-model-client.ts';

export interface EmbedTarget {
  provider: string;
  client: TritonModelClient;
  model: string;
  version: number | undefined;
  info: InferencePortModel;
  call: TritonCallOptions;
}

const INPUT_NAMES = ['text_input', 'text', 'input', 'INPUT', 'TEXT'];
const OUTPUT_NAMES = ['embedding', 'embeddings', 'EMBEDDING', 'output', 'OUTPUT'];

const encoder = new TextEncoder();

/** The model's text input and vector output: the conventional names first, else the only one of the type. */
export function findEmbeddingTensors(provider: string, info: InferencePortModel): { input: string; inputShape: number[]; output: string } {
  const fail = (what: string) =>
    new UpstreamError(`${provider}: model '${info.name}' cannot serve embeddings: ${what} (an embedding model takes one BYTES input and answers an FP32 output)`, {
      provider,
      failure: 'invalid_request',
    });
  const pick = <T extends { name: string; datatype: string }>(list: T[], datatype: string, names: string[]): T | undefined => {
    const typed = list.filter((t) => t.datatype === datatype);
    return typed.find((t) => names.includes(t.name)) ?? (typed.length === 1 ? typed[0] : undefined);
  };
  const input = pick(info.inputs, 'BYTES', INPUT_NAMES);
  if (input === undefined) throw fail(`no single BYTES input (inputs: ${info.inputs.map((i) => `${i.name} ${i.datatype}`).join(', ') || 'none'})`);
  const output = pick(info.outputs, 'FP32', OUTPUT_NAMES);
  if (output === undefined) throw fail(`no single FP32 output (outputs: ${info.outputs.map((o) => `${o.name} ${o.datatype}`).join(', ') || 'none'})`);
  if (info.decoupled) throw fail('it is decoupled');
  const inputShape = input.shape.map((d) => (d < 0 ? 1 : d));
  if (inputShape.some((d) => d !== 1)) throw fail(`its input ${input.name} has shape [${input.shape.join(',')}], not one element`);
  return { input: input.name, inputShape: inputShape.length === 0 ? [1] : inputShape, output: output.name };
}

export async function embedTexts(target: EmbedTarget, req: EmbedRequest): Promise<EmbedResult> {
  const { provider, client, model, version, info, call } = target;
  const tensors = findEmbeddingTensors(provider, info);
  const answers = await Promise.all(
    req.inputs.map((text) =>
      client.infer(
        {
          model,
          ...(version !== undefined ? { version } : {}),
          inputs: [{ name: tensors.input, datatype: 'BYTES', shape: tensors.inputShape, data: [encoder.encode(text)] }],
          outputs: [tensors.output],
        },
        info,
        call,
      ),
    ),
  );
  const vectors = answers.map((answer) => {
    const output = answer.outputs.find((t) => t.name === tensors.output);
    if (output === undefined || !(output.data instanceof Float32Array)) {
      throw new UpstreamError(`${provider}: model '${model}' answered no FP32 output '${tensors.output}'`, { provider, failure: 'malformed' });
    }
    return shorten(provider, info, output.data, req.dimensions);
  });
  let promptTokens = 0;
  for (const text of req.inputs) promptTokens += await countTokens(text);
  return { vectors, usage: { promptTokens, estimated: true } };
}

/**
 * `dimensions` below the model's size: the first N values, L2-normalised again, as OpenAI shortens its
 * text-embedding-3 vectors; only for models trained for it (config parameter `matryoshka: "true"`).
 */
function shorten(provider: string, info: InferencePortModel, vector: Float32Array, dimensions: number | undefined): Float32Array {
  if (dimensions === undefined || dimensions === vector.length) return vector;
  const refuse = (why: string) => new UpstreamError(`${provider}: model '${info.name}' ${why}`, { provider, failure: 'invalid_request' });
  if (dimensions > vector.length) throw refuse(`makes ${vector.length}-dimensional vectors; ${dimensions} dimensions were asked for`);
  if (info.parameters['matryoshka'] !== 'true') {
    throw refuse(`makes ${vector.length}-dimensional vectors and cannot shorten them (its config has no parameter matryoshka: "true")`);
  }
  const out = vector.slice(0, dimensions);
  let norm = 0;
  for (const v of out) norm += v * v;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) / norm;
  return out;
}
