// The `llm` backend's config: inputs and outputs filled the way Triton's vLLM backend auto-completes
// them (so its clients work unchanged), plus Herd's `model` input and `cost` output, and the model's
// `parameters` read once at load: which gateway model to call and the defaults of every call.
import { HerdError } from '../../../core/errors.ts';
import type { ChatPortPriority } from '../../../core/chat-port.ts';
import type { ConfigDataType, ModelConfig, ModelInput, ModelOutput } from '../../model-config/model-config.ts';

const input = (name: string, data_type: ConfigDataType, dims: number[], optional: boolean): ModelInput => ({
  name,
  data_type,
  dims,
  optional,
  format: 'FORMAT_NONE',
  is_shape_tensor: false,
  allow_ragged_batch: false,
  is_non_linear_format_io: false,
});
const output = (name: string, data_type: ConfigDataType, dims: number[]): ModelOutput => ({
  name,
  data_type,
  dims,
  label_filename: '',
  is_shape_tensor: false,
  is_non_linear_format_io: false,
});

const INPUTS: readonly ModelInput[] = [
  input('text_input', 'TYPE_STRING', [1], false),
  input('stream', 'TYPE_BOOL', [1], true),
  input('sampling_parameters', 'TYPE_STRING', [1], true),
  input('exclude_input_in_output', 'TYPE_BOOL', [1], true),
  input('return_finish_reason', 'TYPE_BOOL', [1], true),
  input('return_num_input_tokens', 'TYPE_BOOL', [1], true),
  input('return_num_output_tokens', 'TYPE_BOOL', [1], true),
  // Herd's own: the gateway model of this request (an ensemble's router step), and the cost output's flag.
  input('model', 'TYPE_STRING', [1], true),
  input('return_cost', 'TYPE_BOOL', [1], true),
];

const OUTPUTS: readonly ModelOutput[] = [
  output('text_output', 'TYPE_STRING', [-1]),
  output('finish_reason', 'TYPE_STRING', [-1]),
  output('num_input_tokens', 'TYPE_UINT32', [1]),
  output('num_output_tokens', 'TYPE_UINT32', [-1]),
  // The call's cost in the ledger's settlement currency (not micros), as priced by the gateway.
  output('cost', 'TYPE_FP64', [1]),
];

/** vLLM's _auto_complete_inputs_and_outputs: what the config leaves out is added; batching is the gateway's. */
export function autoCompleteLlmConfig(config: ModelConfig): ModelConfig {
  const completed = structuredClone(config);
  for (const i of INPUTS) if (!completed.input.some((x) => x.name === i.name)) completed.input.push(structuredClone(i));
  for (const o of OUTPUTS) if (!completed.output.some((x) => x.name === o.name)) completed.output.push(structuredClone(o));
  return completed;
}

/** What every call of one llm model starts from (its config `parameters`). */
export interface LlmDefaults {
  /** Gateway model name, alias, tier or `auto`. */
  model: string;
  systemPrompt?: string;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  /** Env var holding the gateway key the model's calls run as; absent: the serving identity. */
  keyEnv?: string;
  priority: ChatPortPriority;
  excludeInputInOutput: boolean;
}

const KNOWN = new Set(['model', 'system_prompt', 'max_tokens', 'temperature', 'top_p', 'gateway_key_env', 'priority', 'exclude_input_in_output']);

export function parseLlmDefaults(config: ModelConfig): LlmDefaults {
  const params = Object.fromEntries(Object.entries(config.parameters).map(([k, v]) => [k, v.string_value]));
  const fail = (key: string, why: string): never => {
    throw new HerdError('INVALID_ARG', `llm model '${config.name}': parameter '${key}' ${why}`, { param: `parameters["${key}"]` });
  };
  for (const key of Object.keys(params)) if (!KNOWN.has(key)) fail(key, `is not known (known: ${[...KNOWN].join(', ')})`);
  const number = (key: string, min: number, max: number, integer = false): number | undefined => {
    const raw = params[key];
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value)))
      fail(key, `must be ${integer ? 'an integer' : 'a number'} in [${min}, ${max}], got '${raw}'`);
    return value;
  };
  const priority = (params['priority'] ?? 'NORMAL').toUpperCase();
  if (priority !== 'HIGH' && priority !== 'NORMAL' && priority !== 'BATCH') fail('priority', `must be HIGH, NORMAL or BATCH, got '${params['priority']}'`);
  const exclude = params['exclude_input_in_output'] ?? 'false';
  if (exclude !== 'true' && exclude !== 'false') fail('exclude_input_in_output', `must be true or false, got '${exclude}'`);
  const defaults: LlmDefaults = {
    model: params['model'] || 'auto',
    priority: priority as ChatPortPriority,
    excludeInputInOutput: exclude === 'true',
  };
  if (params['system_prompt']) defaults.systemPrompt = params['system_prompt'];
  if (params['gateway_key_env']) defaults.keyEnv = params['gateway_key_env'];
  const maxTokens = number('max_tokens', 1, 10_000_000, true);
  if (maxTokens !== undefined) defaults.maxTokens = maxTokens;
  const temperature = number('temperature', 0, 2);
  if (temperature !== undefined) defaults.temperature = temperature;
  const topP = number('top_p', 0, 1);
  if (topP !== undefined) defaults.topP = topP;
  return defaults;
}
