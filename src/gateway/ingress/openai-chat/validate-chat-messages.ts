// Validates the `messages` array of a chat request into typed ChatMessages, naming the exact
// offending path (`messages[2].content[0].image_url.url`) in every error. Members and content parts it does
// not model are recorded as unmodeled (the chat field table says their fate when bridged), never refused.
import type { AssistantMessage, ChatMessage, ImageUrlPart, RefusalPart, TextPart, ToolCall, UnmodeledField, UserContentPart } from '../../protocol/chat-types.ts';
import { expectArray, expectObject, expectOneOf, expectString, invalidParam, type JsonObject } from '../../protocol/check-json-value.ts';
import { CHAT_FIELDS } from './chat-field-table.ts';
import { collectUnknownKeys, createUnmodeled, toDottedPath } from '../../protocol/dialect-field-table.ts';

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

// Fields Herd models per role; `refusal` and `annotations` are accepted on assistant messages because SDK
// users push `completion.choices[0].message` straight back into history.
const KNOWN_KEYS = {
  system: new Set(['role', 'content', 'name']),
  developer: new Set(['role', 'content', 'name']),
  user: new Set(['role', 'content', 'name']),
  assistant: new Set(['role', 'content', 'name', 'tool_calls', 'refusal', 'annotations', 'reasoning_content']),
  tool: new Set(['role', 'content', 'tool_call_id']),
} as const;

export function validateChatMessages(value: unknown, unmodeled: UnmodeledField[]): ChatMessage[] {
  const raw = expectArray(value, 'messages');
  if (raw.length === 0) throw invalidParam('messages', 'expected at least one message');
  const messages: ChatMessage[] = [];
  // Tool messages must answer a tool call made earlier in the conversation (OpenAI enforces this too);
  // Gemini needs the function name, which only the assistant's tool call carries.
  const toolCallIds = new Set<string>();
  for (let i = 0; i < raw.length; i++) {
    const message = validateMessage(raw[i], `messages[${i}]`, unmodeled);
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) toolCallIds.add(call.id);
    if (message.role === 'tool' && !toolCallIds.has(message.tool_call_id)) {
      throw invalidParam(`messages[${i}].tool_call_id`, `'${message.tool_call_id}' does not answer any tool call of an earlier assistant message`);
    }
    messages.push(message);
  }
  return messages;
}

function validateMessage(value: unknown, path: string, unmodeled: UnmodeledField[]): ChatMessage {
  const object = expectObject(value, path);
  const role = expectOneOf(object.role, `${path}.role`, ROLES);
  collectUnknownKeys(object, KNOWN_KEYS[role], path, CHAT_FIELDS, unmodeled, 'messages[]');
  const name = optionalString(object, 'name', path);
  switch (role) {
    case 'system':
    case 'developer':
      return withName({ role, content: textContent(object.content, `${path}.content`, unmodeled) }, name);
    case 'user':
      return withName({ role, content: userContent(object.content, `${path}.content`, unmodeled) }, name);
    case 'assistant':
      return validateAssistant(object, path, name, unmodeled);
    case 'tool':
      return {
        role,
        content: textContent(object.content, `${path}.content`, unmodeled),
        tool_call_id: expectString(object.tool_call_id, `${path}.tool_call_id`, { nonEmpty: true }),
      };
  }
}

function validateAssistant(object: JsonObject, path: string, name: string | undefined, unmodeled: UnmodeledField[]): AssistantMessage {
  const toolCalls = object.tool_calls == null ? undefined : validateToolCalls(object.tool_calls, `${path}.tool_calls`, unmodeled);
  const message: AssistantMessage = { role: 'assistant', content: assistantContent(object.content, `${path}.content`, unmodeled) };
  // An earlier audio answer or legacy function_call carries the turn too (recorded as unmodeled above).
  if (message.content === null && (toolCalls === undefined || toolCalls.length === 0) && object.audio == null && object.function_call == null) {
    throw invalidParam(`${path}.content`, 'an assistant message needs content unless it has tool_calls');
  }
  if (toolCalls !== undefined) message.tool_calls = toolCalls;
  if (typeof object.refusal === 'string') message.refusal = object.refusal;
  if (object.reasoning_content != null) {
    message.reasoning_content = expectString(object.reasoning_content, `${path}.reasoning_content`);
  }
  return withName(message, name);
}

function validateToolCalls(value: unknown, path: string, unmodeled: UnmodeledField[]): ToolCall[] {
  return expectArray(value, path).map((item, j) => {
    const at = `${path}[${j}]`;
    const call = expectObject(item, at);
    collectUnknownKeys(call, TOOL_CALL_KEYS, at, CHAT_FIELDS, unmodeled);
    const type = expectOneOf(call.type, `${at}.type`, ['function', 'custom'] as const);
    if (type === 'custom') {
      const custom = expectObject(call.custom, `${at}.custom`);
      collectUnknownKeys(custom, CUSTOM_KEYS, `${at}.custom`, CHAT_FIELDS, unmodeled);
      return {
        id: expectString(call.id, `${at}.id`, { nonEmpty: true }),
        type,
        custom: { name: expectString(custom.name, `${at}.custom.name`, { nonEmpty: true }), input: expectString(custom.input, `${at}.custom.input`) },
      };
    }
    const fn = expectObject(call.function, `${at}.function`);
    collectUnknownKeys(fn, FUNCTION_KEYS, `${at}.function`, CHAT_FIELDS, unmodeled);
    return {
      id: expectString(call.id, `${at}.id`, { nonEmpty: true }),
      type: 'function',
      function: {
        name: expectString(fn.name, `${at}.function.name`, { nonEmpty: true }),
        arguments: expectString(fn.arguments, `${at}.function.arguments`),
      },
    };
  });
}
const TOOL_CALL_KEYS = new Set(['id', 'type', 'function', 'custom']);
const CUSTOM_KEYS = new Set(['name', 'input']);
const FUNCTION_KEYS = new Set(['name', 'arguments']);

/** string | text parts (system, developer and tool messages). */
function textContent(value: unknown, path: string, unmodeled: UnmodeledField[]): string | TextPart[] {
  if (typeof value === 'string') return value;
  const out: TextPart[] = [];
  expectArray(value, path).forEach((part, j) => {
    const at = `${path}[${j}]`;
    const object = expectObject(part, at);
    if (object.type === 'text') out.push(textPart(object, at, unmodeled));
    else unmodeled.push(unmodeledPart(object, at));
  });
  return out;
}

function userContent(value: unknown, path: string, unmodeled: UnmodeledField[]): string | UserContentPart[] {
  if (typeof value === 'string') return value;
  const parts = expectArray(value, path);
  if (parts.length === 0) throw invalidParam(path, 'expected at least one content part');
  const out: UserContentPart[] = [];
  parts.forEach((part, j) => {
    const at = `${path}[${j}]`;
    const object = expectObject(part, at);
    if (object.type === 'image_url') out.push(imagePart(object, at, unmodeled));
    else if (object.type === 'text') out.push(textPart(object, at, unmodeled));
    else unmodeled.push(unmodeledPart(object, at));
  });
  return out;
}

function assistantContent(value: unknown, path: string, unmodeled: UnmodeledField[]): string | Array<TextPart | RefusalPart> | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  const out: Array<TextPart | RefusalPart> = [];
  expectArray(value, path).forEach((part, j) => {
    const at = `${path}[${j}]`;
    const object = expectObject(part, at);
    if (object.type === 'refusal') {
      collectUnknownKeys(object, REFUSAL_PART_KEYS, at, CHAT_FIELDS, unmodeled);
      out.push({ type: 'refusal', refusal: expectString(object.refusal, `${at}.refusal`) });
    } else if (object.type === 'text') out.push(textPart(object, at, unmodeled));
    else unmodeled.push(unmodeledPart(object, at));
  });
  return out;
}
const REFUSAL_PART_KEYS = new Set(['type', 'refusal']);

/** A content part of a type Herd does not model: left out of the canonical message, its fate the table's. */
function unmodeledPart(part: JsonObject, path: string) {
  const key = `messages[].content[type=${String(part.type)}]`;
  return createUnmodeled(CHAT_FIELDS, Object.hasOwn(CHAT_FIELDS, key) ? key : 'messages[].content[type=(other)]', toDottedPath(path), part);
}

function textPart(object: JsonObject, path: string, unmodeled: UnmodeledField[]): TextPart {
  collectUnknownKeys(object, TEXT_PART_KEYS, path, CHAT_FIELDS, unmodeled);
  return { type: 'text', text: expectString(object.text, `${path}.text`) };
}
const TEXT_PART_KEYS = new Set(['type', 'text']);

function imagePart(object: JsonObject, path: string, unmodeled: UnmodeledField[]): ImageUrlPart {
  collectUnknownKeys(object, IMAGE_PART_KEYS, path, CHAT_FIELDS, unmodeled);
  const image = expectObject(object.image_url, `${path}.image_url`);
  collectUnknownKeys(image, IMAGE_URL_KEYS, `${path}.image_url`, CHAT_FIELDS, unmodeled);
  const url = expectString(image.url, `${path}.image_url.url`, { nonEmpty: true });
  if (!/^(https?:|data:)/i.test(url)) {
    throw invalidParam(`${path}.image_url.url`, 'expected an http(s) URL or a data: URL');
  }
  const part: ImageUrlPart = { type: 'image_url', image_url: { url } };
  if (image.detail != null) {
    part.image_url.detail = expectOneOf(image.detail, `${path}.image_url.detail`, ['auto', 'low', 'high'] as const);
  }
  return part;
}
const IMAGE_PART_KEYS = new Set(['type', 'image_url']);
const IMAGE_URL_KEYS = new Set(['url', 'detail']);

function optionalString(object: JsonObject, key: string, path: string): string | undefined {
  return object[key] == null ? undefined : expectString(object[key], `${path}.${key}`);
}

function withName<T extends ChatMessage>(message: T, name: string | undefined): T {
  if (name !== undefined) (message as T & { name?: string }).name = name;
  return message;
}
