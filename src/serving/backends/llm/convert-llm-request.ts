// One Triton request of an `llm` model to one gateway chat call, read as Triton's vLLM backend reads
// its inputs: the prompt from text_input, sampling settings from the sampling_parameters JSON (else the
// request's parameters), the additional-output flags, and Herd's `model` override and priority mapping.
import type { ChatPortPriority, ChatPortRequest } from '../../../core/chat-port.ts';
import { HerdError } from '../../../core/errors.ts';
import type { Parameters, ParameterValue, Tensor } from '../../../core/tensor.ts';
import type { InferenceRequest } from '../backend.ts';
import type { LlmDefaults } from './llm-model-config.ts';

export interface LlmCall {
  chat: ChatPortRequest;
  prompt: string;
  stream: boolean;
  /** vLLM's prepend_input: the prompt leads text_output (not when streaming). */
  prependInput: boolean;
  /** Additional outputs asked for (flag input, or the output named in the request). */
  want: { finishReason: boolean; inputTokens: boolean; outputTokens: boolean; cost: boolean };
}

const utf8 = new TextDecoder();

function firstString(tensor: Tensor | undefined): string | undefined {
  if (!tensor || !Array.isArray(tensor.data)) return undefined;
  const first = tensor.data[0];
  return first === undefined ? undefined : utf8.decode(first);
}

function firstBool(tensor: Tensor | undefined): boolean | undefined {
  if (!tensor || Array.isArray(tensor.data)) return undefined;
  const first = tensor.data[0];
  return first === undefined ? undefined : Boolean(first);
}

const SAMPLING_KEYS = new Set(['max_tokens', 'temperature', 'top_p', 'stop', 'seed', 'presence_penalty', 'frequency_penalty']);

export function convertLlmRequest(request: InferenceRequest, defaults: LlmDefaults, origin: string): LlmCall {
  const input = (name: string) => request.inputs.find((t) => t.name === name);
  const prompt = firstString(input('text_input'));
  // llm-backend.ts names the model in front of every conversion error.
  if (prompt === undefined) throw new HerdError('INVALID_ARG', "input 'text_input' must hold one string");
  const stream = firstBool(input('stream')) ?? false;
  const exclude = firstBool(input('exclude_input_in_output'));
  const prependInput = exclude !== undefined ? !exclude : !stream && !defaults.excludeInputInOutput;
  if (prependInput && stream) throw new HerdError('INVALID_ARG', 'When streaming, `exclude_input_in_output` = False is not allowed.');

  const sampling = readSampling(request, firstString(input('sampling_parameters')));
  const requested = new Set(request.requestedOutputs);
  const flag = (name: string, output: string) => firstBool(input(name)) === true || requested.has(output);
  const model = firstString(input('model'))?.trim();
  const chat: ChatPortRequest = {
    model: model || defaults.model,
    messages: [...(defaults.systemPrompt ? [{ role: 'system' as const, content: defaults.systemPrompt }] : []), { role: 'user', content: prompt }],
    priority: mapTritonPriority(request.parameters['priority'], defaults.priority),
    origin,
    ...(defaults.keyEnv !== undefined ? { keyEnv: defaults.keyEnv } : {}),
  };
  const maxTokens = integer(sampling, 'max_tokens', 1) ?? defaults.maxTokens;
  if (maxTokens !== undefined) chat.maxTokens = maxTokens;
  const temperature = number(sampling, 'temperature', 0, 2) ?? defaults.temperature;
  if (temperature !== undefined) chat.temperature = temperature;
  const topP = number(sampling, 'top_p', 0, 1) ?? defaults.topP;
  if (topP !== undefined) chat.topP = topP;
  const seed = integer(sampling, 'seed', Number.MIN_SAFE_INTEGER);
  if (seed !== undefined) chat.seed = seed;
  const presence = number(sampling, 'presence_penalty', -2, 2);
  if (presence !== undefined) chat.presencePenalty = presence;
  const frequency = number(sampling, 'frequency_penalty', -2, 2);
  if (frequency !== undefined) chat.frequencyPenalty = frequency;
  const stop = sampling['stop'];
  if (stop !== undefined) {
    if (typeof stop === 'string') chat.stop = [stop];
    else if (Array.isArray(stop) && stop.every((s) => typeof s === 'string')) chat.stop = stop as string[];
    else throw new HerdError('INVALID_ARG', "sampling parameter 'stop' must be a string or an array of strings");
  }
  return {
    chat,
    prompt,
    stream,
    prependInput,
    want: {
      finishReason: flag('return_finish_reason', 'finish_reason'),
      inputTokens: flag('return_num_input_tokens', 'num_input_tokens'),
      outputTokens: flag('return_num_output_tokens', 'num_output_tokens'),
      cost: flag('return_cost', 'cost'),
    },
  };
}

type Sampling = Record<string, unknown>;

/** The sampling_parameters JSON replaces the request's parameters, as in vLLM; its unknown keys are errors. */
function readSampling(request: InferenceRequest, json: string | undefined): Sampling {
  if (json === undefined) return pickKnown(request.parameters);
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    throw new HerdError('INVALID_ARG', `input 'sampling_parameters' is not valid JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new HerdError('INVALID_ARG', "input 'sampling_parameters' must be a JSON object");
  const unknown = Object.keys(parsed).filter((k) => !SAMPLING_KEYS.has(k));
  if (unknown.length > 0)
    throw new HerdError('INVALID_ARG', `sampling parameter(s) not supported by the llm backend: ${unknown.join(', ')} (supported: ${[...SAMPLING_KEYS].join(', ')})`);
  return parsed as Sampling;
}

/** Request parameters also carry Triton's own (priority, timeout, sequence ids): only sampling keys count. */
function pickKnown(parameters: Parameters): Sampling {
  const out: Record<string, ParameterValue> = {};
  for (const [k, v] of Object.entries(parameters)) if (SAMPLING_KEYS.has(k)) out[k] = v;
  return out;
}

function number(sampling: Sampling, key: string, min: number, max: number): number | undefined {
  const v = sampling[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw new HerdError('INVALID_ARG', `sampling parameter '${key}' must be a number in [${min}, ${max}]`);
  return v;
}

function integer(sampling: Sampling, key: string, min: number): number | undefined {
  const v = sampling[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new HerdError('INVALID_ARG', `sampling parameter '${key}' must be an integer of at least ${min}`);
  return v;
}

/** Triton's request priority (1 = highest; 0 or absent = the model's default) onto the gateway's classes. */
export function mapTritonPriority(value: ParameterValue | undefined, fallback: ChatPortPriority): ChatPortPriority {
  if (value === undefined || value === 0) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new HerdError('INVALID_ARG', `priority ${JSON.stringify(value)} is not valid: use 1 (highest) or more, or 0 for the model's default`);
  return value === 1 ? 'HIGH' : value === 2 ? 'NORMAL' : 'BATCH';
}
