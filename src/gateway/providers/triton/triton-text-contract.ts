// Triton's vLLM-style text contract as the triton provider speaks it: which of text_input, stream,
// sampling_parameters, exclude_input_in_output and the return_* flags a model takes, the request
// tensors for one prompt, and text_output (with finish_reason and token counts when present) back.
import type { InferencePortAnswer, InferencePortModel } from '../../../core/inference-port.ts';
import type { Tensor } from '../../../core/tensor.ts';
import type { ChatRequest, FinishReason } from '../../protocol/chat-types.ts';
import type { ProviderWarning } from '../provider.ts';
import { UpstreamError } from '../../protocol/upstream-error.ts';

type Spec = InferencePortModel['inputs'][number];

export interface TextContract {
  /** Shape of a one-element tensor of each input the provider sends (a batch dimension of 1 included). */
  shapes: ReadonlyMap<string, number[]>;
  decoupled: boolean;
  /** Optional outputs the model has, asked for through their return_* flag when it has one. */
  outputs: { finishReason: boolean; inputTokens: boolean; outputTokens: boolean };
}

const OPTIONAL_INPUTS: Readonly<Record<string, string>> = {
  stream: 'BOOL',
  sampling_parameters: 'BYTES',
  exclude_input_in_output: 'BOOL',
  return_finish_reason: 'BOOL',
  return_num_input_tokens: 'BOOL',
  return_num_output_tokens: 'BOOL',
};

/** The contract a model's metadata allows; `invalid_request` naming the model when it has no text_input/text_output. */
export function readTextContract(provider: string, model: InferencePortModel): TextContract {
  const fail = (what: string) =>
    new UpstreamError(`${provider}: model '${model.name}' cannot serve chat: ${what} (a text model takes text_input (BYTES) and answers text_output (BYTES))`, {
      provider,
      failure: 'invalid_request',
    });
  const shapes = new Map<string, number[]>();
  const textInput = model.inputs.find((i) => i.name === 'text_input');
  if (textInput === undefined || textInput.datatype !== 'BYTES') {
    throw fail(textInput ? `its input text_input is ${textInput.datatype}` : `it has no input text_input (inputs: ${model.inputs.map((i) => i.name).join(', ') || 'none'})`);
  }
  shapes.set('text_input', singleElementShape(textInput, fail));
  for (const input of model.inputs) {
    if (input.name === 'text_input') continue;
    const datatype = OPTIONAL_INPUTS[input.name];
    // Other inputs must be optional on the model's side: Herd has nothing to put in them.
    if (datatype === undefined || input.datatype !== datatype) continue;
    shapes.set(input.name, singleElementShape(input, fail));
  }
  const output = (name: string, datatype: string) => model.outputs.some((o) => o.name === name && o.datatype === datatype);
  const textOutput = model.outputs.find((o) => o.name === 'text_output');
  if (textOutput === undefined || textOutput.datatype !== 'BYTES') {
    throw fail(
      textOutput ? `its output text_output is ${textOutput.datatype}` : `it has no output text_output (outputs: ${model.outputs.map((o) => o.name).join(', ') || 'none'})`,
    );
  }
  return {
    shapes,
    decoupled: model.decoupled,
    outputs: {
      finishReason: output('finish_reason', 'BYTES'),
      inputTokens: model.outputs.some((o) => o.name === 'num_input_tokens' && isInteger(o.datatype)),
      outputTokens: model.outputs.some((o) => o.name === 'num_output_tokens' && isInteger(o.datatype)),
    },
  };
}

function isInteger(datatype: string): boolean {
  return /^U?INT(8|16|32|64)$/.test(datatype);
}

/** Metadata shapes carry -1 for the batch and variable dimensions: each becomes 1; more than one element is refused. */
function singleElementShape(spec: Spec, fail: (what: string) => UpstreamError): number[] {
  const shape = spec.shape.map((d) => (d < 0 ? 1 : d));
  if (shape.some((d) => d !== 1)) throw fail(`its input ${spec.name} has shape [${spec.shape.join(',')}], not one element`);
  return shape.length === 0 ? [1] : shape;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Chat settings a text model has no way to take; each one used is a warning, never silent. */
const UNSUPPORTED: ReadonlyArray<keyof ChatRequest> = [
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'reasoning_effort',
  'n',
];
const SAMPLING: ReadonlyArray<keyof ChatRequest> = ['max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'seed', 'presence_penalty', 'frequency_penalty'];

export interface TextRequest {
  inputs: Tensor[];
  /** Output names to ask for (empty: every output). */
  outputs: string[];
  warnings: ProviderWarning[];
}

/** The input tensors of one prompt; `stream` asks a decoupled model for deltas. */
export function createTextRequest(contract: TextContract, prompt: string, request: ChatRequest, stream: boolean, upstream: string): TextRequest {
  const warnings: ProviderWarning[] = [];
  for (const param of UNSUPPORTED) {
    if (request[param] !== undefined && !(param === 'n' && request.n === 1)) {
      warnings.push({ param, message: `${upstream} (a Triton text model) does not support '${param}'; it was not sent` });
    }
  }
  const shapes = contract.shapes;
  const inputs: Tensor[] = [bytes('text_input', shapes, prompt)];
  const flag = (name: string, value: boolean) => {
    if (shapes.has(name)) inputs.push({ name, datatype: 'BOOL', shape: shapes.get(name) as number[], data: Uint8Array.of(value ? 1 : 0) });
  };
  flag('stream', stream);
  flag('exclude_input_in_output', true);
  flag('return_finish_reason', contract.outputs.finishReason);
  flag('return_num_input_tokens', contract.outputs.inputTokens);
  flag('return_num_output_tokens', contract.outputs.outputTokens);
  const sampling = createSamplingParameters(request);
  if (Object.keys(sampling).length > 0) {
    if (shapes.has('sampling_parameters')) inputs.push(bytes('sampling_parameters', shapes, JSON.stringify(sampling)));
    else {
      for (const param of SAMPLING) {
        if (request[param] !== undefined) warnings.push({ param, message: `${upstream} has no sampling_parameters input; '${param}' was not sent` });
      }
    }
  }
  const outputs = ['text_output'];
  if (contract.outputs.finishReason) outputs.push('finish_reason');
  if (contract.outputs.inputTokens) outputs.push('num_input_tokens');
  if (contract.outputs.outputTokens) outputs.push('num_output_tokens');
  return { inputs, outputs, warnings };
}

function bytes(name: string, shapes: ReadonlyMap<string, number[]>, text: string): Tensor {
  return { name, datatype: 'BYTES', shape: shapes.get(name) as number[], data: [encoder.encode(text)] };
}

/** vLLM's SamplingParams names (Triton's vLLM backend parses this JSON into them). */
export function createSamplingParameters(request: ChatRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens !== undefined) out['max_tokens'] = maxTokens;
  if (request.temperature !== undefined) out['temperature'] = request.temperature;
  if (request.top_p !== undefined) out['top_p'] = request.top_p;
  if (request.stop !== undefined) out['stop'] = typeof request.stop === 'string' ? [request.stop] : request.stop;
  if (request.seed !== undefined) out['seed'] = request.seed;
  if (request.presence_penalty !== undefined) out['presence_penalty'] = request.presence_penalty;
  if (request.frequency_penalty !== undefined) out['frequency_penalty'] = request.frequency_penalty;
  return out;
}

export interface TextOutput {
  /** Every text_output element of the response, joined. */
  text: string;
  /** The model's own finish reason, when it sent one. */
  finishReason: string | undefined;
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

/** One response's outputs; `malformed` when text_output is missing or not BYTES. */
export function decodeTextOutput(provider: string, model: string, answer: InferencePortAnswer): TextOutput {
  const find = (name: string) => answer.outputs.find((t) => t.name === name);
  const text = find('text_output');
  // A decoupled model may close with an empty final response that carries only the counts.
  if (text !== undefined && !Array.isArray(text.data)) {
    throw new UpstreamError(`${provider}: model '${model}' answered text_output as ${text.datatype}, not BYTES`, { provider, failure: 'malformed' });
  }
  const reason = find('finish_reason');
  const sum = (tensor: Tensor | undefined): number | undefined => {
    if (tensor === undefined || Array.isArray(tensor.data) || tensor.data.length === 0) return undefined;
    let total = 0;
    for (const v of tensor.data) total += Number(v);
    return total;
  };
  const texts = (tensor: Tensor | undefined) => (tensor && Array.isArray(tensor.data) ? tensor.data.map((b) => decoder.decode(b)) : []);
  // Responses before the last carry an empty reason (vLLM: "None").
  const reasons = texts(reason).filter((r) => r !== '' && r !== 'None');
  return {
    text: texts(text).join(''),
    finishReason: reasons.at(-1),
    inputTokens: sum(find('num_input_tokens')),
    outputTokens: sum(find('num_output_tokens')),
  };
}

/** vLLM's finish reasons: `length` is the token limit; `stop` and the rest (`abort`, an end token) are a stop. */
export function mapTritonFinishReason(raw: string | undefined): FinishReason {
  return raw === 'length' ? 'length' : 'stop';
}
