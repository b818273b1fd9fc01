// A Responses request's `input` as chat messages. Errors name the Responses param (`input[2].content[0].image_url`);
// items, parts and members the chat shape cannot carry are recorded as unmodeled with their fate from the field
// table (they reach a Responses upstream on pass-through as sent).
import type { AssistantMessage, ChatMessage, ImageUrlPart, RefusalPart, TextPart, ToolCall, UnmodeledField, UserContentPart } from '../../protocol/chat-types.ts';
import { expectArray, expectObject, expectOneOf, expectString, invalidParam, type JsonObject } from '../../protocol/check-json-value.ts';
import { collectUnknownKeys, createUnmodeled, toDottedPath } from '../../protocol/dialect-field-table.ts';
import { flattenNamespacedName } from './decode-responses-tools.ts';
import { RESPONSES_FIELDS } from './responses-field-table.ts';

const MESSAGE_KEYS = new Set(['type', 'role', 'content', 'id', 'status', 'phase']);
const FUNCTION_CALL_KEYS = new Set(['type', 'id', 'call_id', 'namespace', 'name', 'arguments', 'status']);
const FUNCTION_OUTPUT_KEYS = new Set(['type', 'id', 'call_id', 'output', 'status']);
const CUSTOM_CALL_KEYS = new Set(['type', 'id', 'call_id', 'namespace', 'name', 'input', 'status']);
const REASONING_KEYS = new Set(['type', 'id', 'summary', 'content', 'status']);

export function decodeResponsesInput(value: unknown, unmodeled: UnmodeledField[]): ChatMessage[] {
  if (typeof value === 'string') return [{ role: 'user', content: value }];
  const items = expectArray(value, 'input');
  if (items.length === 0) throw invalidParam('input', 'expected at least one input item');
  const messages: ChatMessage[] = [];
  const callIds = new Set<string>();
  // Reasoning replayed by the client rides on the next assistant turn (DeepSeek wants it within a tool loop).
  let reasoning: string | undefined;
  // Consecutive function_call items are one assistant turn with several tool calls, as in chat.
  let lastAssistant: AssistantMessage | undefined;
  for (let i = 0; i < items.length; i++) {
    const at = `input[${i}]`;
    const item = expectObject(items[i], at);
    const type = item.type ?? 'message';
    if (type === 'message') {
      collectUnknownKeys(item, MESSAGE_KEYS, at, RESPONSES_FIELDS, unmodeled);
      const message = decodeMessage(item, at, unmodeled);
      if (message.role === 'assistant' && reasoning !== undefined) {
        message.reasoning_content = reasoning;
        reasoning = undefined;
      }
      messages.push(message);
      lastAssistant = message.role === 'assistant' ? message : undefined;
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      collectUnknownKeys(item, type === 'function_call' ? FUNCTION_CALL_KEYS : CUSTOM_CALL_KEYS, at, RESPONSES_FIELDS, unmodeled);
      const id = expectString(item.call_id, `${at}.call_id`, { nonEmpty: true });
      const own = expectString(item.name, `${at}.name`, { nonEmpty: true });
      const name = item.namespace != null ? flattenNamespacedName(expectString(item.namespace, `${at}.namespace`), own) : own;
      const call: ToolCall =
        type === 'function_call'
          ? { id, type: 'function', function: { name, arguments: expectString(item.arguments, `${at}.arguments`) } }
          : { id, type: 'custom', custom: { name, input: expectString(item.input, `${at}.input`) } };
      callIds.add(call.id);
      if (lastAssistant === undefined) {
        lastAssistant = { role: 'assistant', content: null, tool_calls: [] };
        if (reasoning !== undefined) {
          lastAssistant.reasoning_content = reasoning;
          reasoning = undefined;
        }
        messages.push(lastAssistant);
      }
      (lastAssistant.tool_calls ??= []).push(call);
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      collectUnknownKeys(item, FUNCTION_OUTPUT_KEYS, at, RESPONSES_FIELDS, unmodeled);
      const callId = expectString(item.call_id, `${at}.call_id`, { nonEmpty: true });
      if (!callIds.has(callId)) throw invalidParam(`${at}.call_id`, `'${callId}' does not answer any function_call earlier in the input`);
      messages.push({ role: 'tool', tool_call_id: callId, content: decodeFunctionOutput(item.output, `${at}.output`, unmodeled) });
      lastAssistant = undefined;
    } else if (type === 'reasoning') {
      if (item.encrypted_content != null) {
        unmodeled.push(createUnmodeled(RESPONSES_FIELDS, 'input[type=reasoning].encrypted_content', `input.${i}.encrypted_content`, item.encrypted_content));
      }
      collectUnknownKeys(item, REASONING_KEYS_WITH_ENCRYPTED, at, RESPONSES_FIELDS, unmodeled);
      const text = decodeReasoningText(item, at, unmodeled);
      if (text.length > 0) reasoning = reasoning === undefined ? text : `${reasoning}\n${text}`;
    } else {
      const key = `input[type=${String(type)}]`;
      unmodeled.push(createUnmodeled(RESPONSES_FIELDS, Object.hasOwn(RESPONSES_FIELDS, key) ? key : 'input[type=(other)]', `input.${i}`, item));
    }
  }
  return messages;
}
const REASONING_KEYS_WITH_ENCRYPTED = new Set([...REASONING_KEYS, 'encrypted_content']);

function decodeMessage(item: JsonObject, at: string, unmodeled: UnmodeledField[]): ChatMessage {
  const role = expectOneOf(item.role, `${at}.role`, ['user', 'assistant', 'system', 'developer'] as const);
  const content = item.content;
  if (typeof content === 'string') return role === 'assistant' ? { role, content } : { role, content };
  const parts = expectArray(content, `${at}.content`);
  if (role === 'assistant') {
    const out: Array<TextPart | RefusalPart> = [];
    parts.forEach((part, j) => {
      const decoded = decodeAssistantPart(part, `${at}.content[${j}]`, unmodeled);
      if (decoded !== undefined) out.push(decoded);
    });
    return { role, content: out };
  }
  const out: UserContentPart[] = [];
  parts.forEach((part, j) => {
    const decoded = decodeUserPart(part, `${at}.content[${j}]`, unmodeled);
    if (decoded !== undefined) out.push(decoded);
  });
  if (role === 'user') return { role, content: out };
  const texts = out.map((part, j) => {
    if (part.type !== 'text') throw invalidParam(`${at}.content[${j}].type`, `a ${role} message carries text only`);
    return part;
  });
  return { role, content: texts };
}

/** A part of a type chat has no place for: recorded (its fate the table's), left out of the message. */
function unmodeledPart(part: JsonObject, at: string, unmodeled: UnmodeledField[]): undefined {
  const key = `input[].content[type=${String(part.type)}]`;
  unmodeled.push(createUnmodeled(RESPONSES_FIELDS, Object.hasOwn(RESPONSES_FIELDS, key) ? key : 'input[].content[type=(other)]', toDottedPath(at), part));
  return undefined;
}

function decodeUserPart(value: unknown, at: string, unmodeled: UnmodeledField[]): UserContentPart | undefined {
  const part = expectObject(value, at);
  if (part.type === 'input_text') {
    collectUnknownKeys(part, TEXT_KEYS, at, RESPONSES_FIELDS, unmodeled);
    return { type: 'text', text: expectString(part.text, `${at}.text`) };
  }
  if (part.type !== 'input_image') return unmodeledPart(part, at, unmodeled);
  collectUnknownKeys(part, IMAGE_KEYS, at, RESPONSES_FIELDS, unmodeled);
  if (part.file_id != null) {
    unmodeled.push(createUnmodeled(RESPONSES_FIELDS, 'input[].content[type=input_image].file_id', toDottedPath(`${at}.file_id`), part.file_id));
    if (part.image_url == null) return undefined;
  }
  const image: ImageUrlPart = { type: 'image_url', image_url: { url: expectString(part.image_url, `${at}.image_url`, { nonEmpty: true }) } };
  // 'original' is Responses-only; chat's nearest is high.
  if (part.detail != null) {
    const detail = expectOneOf(part.detail, `${at}.detail`, ['auto', 'low', 'high', 'original'] as const);
    image.image_url.detail = detail === 'original' ? 'high' : detail;
  }
  return image;
}
const TEXT_KEYS = new Set(['type', 'text']);
const IMAGE_KEYS = new Set(['type', 'image_url', 'detail', 'file_id']);

function decodeAssistantPart(value: unknown, at: string, unmodeled: UnmodeledField[]): TextPart | RefusalPart | undefined {
  const part = expectObject(value, at);
  if (part.type === 'refusal') {
    collectUnknownKeys(part, REFUSAL_KEYS, at, RESPONSES_FIELDS, unmodeled);
    return { type: 'refusal', refusal: expectString(part.refusal, `${at}.refusal`) };
  }
  if (part.type !== 'output_text' && part.type !== 'input_text') return unmodeledPart(part, at, unmodeled);
  // An SDK user replays `response.output` as it came, annotations and logprobs included.
  collectUnknownKeys(part, OUTPUT_TEXT_KEYS, at, RESPONSES_FIELDS, unmodeled);
  return { type: 'text', text: expectString(part.text, `${at}.text`) };
}
const REFUSAL_KEYS = new Set(['type', 'refusal']);
const OUTPUT_TEXT_KEYS = new Set(['type', 'text', 'annotations', 'logprobs']);

function decodeFunctionOutput(value: unknown, at: string, unmodeled: UnmodeledField[]): string | TextPart[] {
  if (typeof value === 'string') return value;
  const out: TextPart[] = [];
  expectArray(value, at).forEach((item, j) => {
    const part = expectObject(item, `${at}[${j}]`);
    if (part.type !== 'input_text') {
      unmodeled.push(createUnmodeled(RESPONSES_FIELDS, 'input[].output[type=(other)]', toDottedPath(`${at}[${j}]`), part));
      return;
    }
    collectUnknownKeys(part, TEXT_KEYS, `${at}[${j}]`, RESPONSES_FIELDS, unmodeled);
    out.push({ type: 'text', text: expectString(part.text, `${at}[${j}].text`) });
  });
  return out;
}

/** The readable text of a replayed reasoning item (its encrypted_content is OpenAI's, recorded by the caller). */
function decodeReasoningText(item: JsonObject, at: string, unmodeled: UnmodeledField[]): string {
  const texts: string[] = [];
  const read = (member: 'content' | 'summary') =>
    expectArray(item[member], `${at}.${member}`).forEach((part, j) => {
      const p = expectObject(part, `${at}.${member}[${j}]`);
      collectUnknownKeys(p, TEXT_KEYS, `${at}.${member}[${j}]`, RESPONSES_FIELDS, unmodeled);
      if (typeof p.text === 'string') texts.push(p.text);
    });
  if (item.content != null) read('content');
  const fromContent = texts.length;
  // Both are read (for their members); the summary is the readable text only when there is no content text.
  if (item.summary != null) read('summary');
  return (fromContent > 0 ? texts.slice(0, fromContent) : texts).join('\n');
}
