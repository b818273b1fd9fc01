// Renders OpenAI chat messages to the one prompt string a Triton text model takes as text_input: a
// preset (plain, raw, chatml, llama3) or a template of per-role formats with a {content} placeholder.
import { PROMPT_TEMPLATE_PRESETS, type PromptTemplateConfig } from '../../../config/gateway-config-schema.ts';
import { HerdError } from '../../../core/errors.ts';
import type { ChatMessage } from '../../protocol/chat-types.ts';

export interface PromptTemplate {
  system: string;
  user: string;
  assistant: string;
  tool: string;
  /** Appended after the last message: where the model's answer starts. */
  generation: string;
}

const PRESETS: Readonly<Record<(typeof PROMPT_TEMPLATE_PRESETS)[number], PromptTemplate>> = {
  // A role-labelled transcript any instruction-following text model reads.
  plain: { system: '{content}\n\n', user: 'User: {content}\n', assistant: 'Assistant: {content}\n', tool: 'Tool: {content}\n', generation: 'Assistant:' },
  // The messages' text alone, one blank line apart: for completion models and deterministic test models.
  raw: { system: '{content}\n\n', user: '{content}\n\n', assistant: '{content}\n\n', tool: '{content}\n\n', generation: '' },
  chatml: {
    system: '<|im_start|>system\n{content}<|im_end|>\n',
    user: '<|im_start|>user\n{content}<|im_end|>\n',
    assistant: '<|im_start|>assistant\n{content}<|im_end|>\n',
    tool: '<|im_start|>tool\n{content}<|im_end|>\n',
    generation: '<|im_start|>assistant\n',
  },
  llama3: {
    system: '<|start_header_id|>system<|end_header_id|>\n\n{content}<|eot_id|>',
    user: '<|start_header_id|>user<|end_header_id|>\n\n{content}<|eot_id|>',
    assistant: '<|start_header_id|>assistant<|end_header_id|>\n\n{content}<|eot_id|>',
    tool: '<|start_header_id|>ipython<|end_header_id|>\n\n{content}<|eot_id|>',
    generation: '<|start_header_id|>assistant<|end_header_id|>\n\n',
  },
};

export const DEFAULT_PROMPT_TEMPLATE: PromptTemplate = PRESETS.plain;

/** A herd.yaml prompt_template (already validated) as a template. */
export function resolvePromptTemplate(config: PromptTemplateConfig): PromptTemplate {
  if (typeof config === 'string') return PRESETS[config];
  return { system: config.system, user: config.user, assistant: config.assistant, tool: config.tool ?? config.user, generation: config.generation };
}

/**
 * A model's `prompt_template` parameter (config.pbtxt): a preset name, or the JSON of a template
 * object as herd.yaml takes it. INVALID_ARG names what is wrong.
 */
export function parsePromptTemplateParameter(model: string, value: string): PromptTemplate {
  const text = value.trim();
  if ((PROMPT_TEMPLATE_PRESETS as readonly string[]).includes(text)) return PRESETS[text as (typeof PROMPT_TEMPLATE_PRESETS)[number]];
  const where = `model '${model}': parameter prompt_template`;
  if (!text.startsWith('{')) throw new HerdError('INVALID_ARG', `${where} '${text}' is not a preset (${PROMPT_TEMPLATE_PRESETS.join(', ')}) nor a JSON object`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new HerdError('INVALID_ARG', `${where} is not valid JSON: ${(err as Error).message}`);
  }
  const object = parsed as Record<string, unknown>;
  const part = (key: string, required: boolean): string | undefined => {
    const v = object[key];
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string' || (key !== 'generation' && !v.includes('{content}'))) {
      throw new HerdError('INVALID_ARG', `${where}: '${key}' must be a string${key === 'generation' ? '' : ' containing {content}'}`);
    }
    return v;
  };
  const unknown = Object.keys(object).filter((k) => !['system', 'user', 'assistant', 'tool', 'generation'].includes(k));
  if (unknown.length > 0) throw new HerdError('INVALID_ARG', `${where}: unknown key(s) ${unknown.join(', ')}`);
  const user = part('user', true) as string;
  return {
    system: part('system', true) as string,
    user,
    assistant: part('assistant', true) as string,
    tool: part('tool', false) ?? user,
    generation: part('generation', false) ?? '',
  };
}

/** Text of a message; images cannot reach a text model, so they are refused rather than dropped. */
function messageText(message: ChatMessage, index: number): string {
  const content = message.content;
  if (content === null || content === undefined) {
    if (message.role === 'assistant' && message.tool_calls?.length) {
      throw new HerdError('INVALID_ARG', `messages[${index}]: a Triton text model cannot replay tool calls`);
    }
    return '';
  }
  if (typeof content === 'string') return content;
  return content
    .map((part, p) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'refusal') return part.refusal;
      throw new HerdError('INVALID_ARG', `messages[${index}].content[${p}]: a Triton text model takes text only, not ${part.type}`);
    })
    .join('\n');
}

export function renderChatPrompt(messages: readonly ChatMessage[], template: PromptTemplate): string {
  let out = '';
  messages.forEach((message, i) => {
    const format = message.role === 'system' || message.role === 'developer' ? template.system : template[message.role];
    // A function, not a string: `$&` and friends in a message must stay literal.
    out += format.replaceAll('{content}', () => messageText(message, i));
  });
  // raw's blank lines separate messages; none trails the last one.
  return template === PRESETS.raw ? out.replace(/\n+$/, '') : out + template.generation;
}
