// Anthropic `messages` (user, assistant and system turns) -> canonical chat messages in the same order:
// tool_result blocks become tool messages, system turns system messages in place; blocks with no
// canonical place are recorded (dropped or refused on bridged routes), never refused here.
import type { AssistantMessage, ChatMessage, TextPart, ToolCall, UserContentPart } from '../../protocol/chat-types.ts';
import { describeValue, isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';
import { contentBlocks, decodePartBlock, invalid, PART_BLOCK_TYPES, recordBlock, textOf } from './decode-messages-blocks.ts';
import { BLOCK_FIELDS } from './messages-field-table.ts';
import type { UnmodeledFields } from './unmodeled-fields.ts';

const MESSAGE: ReadonlySet<string> = new Set(['role', 'content']);
const TOOL_USE: ReadonlySet<string> = new Set(['type', 'cache_control', 'id', 'name', 'input']);
const TOOL_RESULT: ReadonlySet<string> = new Set(['type', 'cache_control', 'tool_use_id', 'content', 'is_error']);
const THINKING: ReadonlySet<string> = new Set(['type', 'thinking', 'signature']);

export function decodeMessagesTurns(value: unknown, unmodeled: UnmodeledFields): ChatMessage[] {
  if (!Array.isArray(value)) throw invalid('messages', 'Field required (an array of messages)');
  if (value.length === 0) throw invalid('messages', 'at least one message is required');
  const out: ChatMessage[] = [];
  value.forEach((message, i) => {
    const param = `messages.${i}`;
    if (!isJsonObject(message)) throw invalid(param, `expected an object, got ${describeValue(message)}`);
    unmodeled.others(message, param, MESSAGE);
    if (message.role === 'user') out.push(...decodeUserTurn(message.content, param, unmodeled));
    else if (message.role === 'assistant') out.push(decodeAssistantTurn(message.content, param, unmodeled));
    else if (message.role === 'system') out.push(...decodeSystemTurn(message.content, param, unmodeled));
    else throw invalid(`${param}.role`, `expected 'user', 'assistant' or 'system', got ${describeValue(message.role)}`);
  });
  return out;
}

/** A system turn's text, where it stands (Claude Code sends them mid-conversation to newer models). */
export function decodeSystemTurn(content: unknown, param: string, unmodeled: UnmodeledFields): ChatMessage[] {
  if (typeof content === 'string') return content === '' ? [] : [{ role: 'system', content }];
  const at = param === 'system' ? param : `${param}.content`;
  const parts: TextPart[] = [];
  contentBlocks(content, at).forEach((block, j) => {
    if (block.type === 'text') parts.push({ type: 'text', text: textOf(block, `${at}.${j}`, unmodeled) });
    else recordBlock(block, `${at}.${j}`, unmodeled);
  });
  return parts.length === 0 ? [] : [{ role: 'system', content: parts }];
}

/**
 * tool_result blocks become tool messages ahead of the rest of the turn (Anthropic wants them first anyway).
 * A tool message carries text only, so a result's images follow in the turn's user message, each group
 * introduced by the call it answers.
 */
function decodeUserTurn(content: unknown, param: string, unmodeled: UnmodeledFields): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const tools: ChatMessage[] = [];
  const fromTools: UserContentPart[] = [];
  const parts: UserContentPart[] = [];
  contentBlocks(content, `${param}.content`).forEach((block, j) => {
    const at = `${param}.content.${j}`;
    if (block.type === 'tool_result') {
      const { message, images } = decodeToolResult(block, at, unmodeled);
      tools.push(message);
      if (images.length > 0) fromTools.push({ type: 'text', text: `Images from the result of tool call ${message.tool_call_id}:` }, ...images);
    } else if (PART_BLOCK_TYPES.has(block.type as string)) parts.push(...decodePartBlock(block, at, unmodeled));
    else recordBlock(block, at, unmodeled);
  });
  const user = [...fromTools, ...parts];
  return user.length > 0 ? [...tools, { role: 'user', content: user }] : tools;
}

function decodeToolResult(block: JsonObject, param: string, unmodeled: UnmodeledFields): { message: Extract<ChatMessage, { role: 'tool' }>; images: UserContentPart[] } {
  if (typeof block.tool_use_id !== 'string' || block.tool_use_id === '') throw invalid(`${param}.tool_use_id`, 'expected a non-empty string');
  unmodeled.others(block, param, TOOL_RESULT);
  if (block.is_error === true) unmodeled.add(`${param}.is_error`, BLOCK_FIELDS['tool_result.is_error'], true);
  const content = block.content ?? undefined;
  const id = block.tool_use_id;
  if (content === undefined) return { message: { role: 'tool', tool_call_id: id, content: '' }, images: [] };
  if (typeof content === 'string') return { message: { role: 'tool', tool_call_id: id, content }, images: [] };
  const texts: TextPart[] = [];
  const images: UserContentPart[] = [];
  contentBlocks(content, `${param}.content`).forEach((inner, k) => {
    const at = `${param}.content.${k}`;
    if (!PART_BLOCK_TYPES.has(inner.type as string)) {
      recordBlock(inner, at, unmodeled);
      return;
    }
    for (const part of decodePartBlock(inner, at, unmodeled)) {
      if (part.type === 'text') texts.push(part);
      else images.push(part);
    }
  });
  return { message: { role: 'tool', tool_call_id: id, content: texts.length === 0 ? '' : texts }, images };
}

function decodeAssistantTurn(content: unknown, param: string, unmodeled: UnmodeledFields): AssistantMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: TextPart[] = [];
  const calls: ToolCall[] = [];
  let reasoning: string | undefined;
  let signature: string | undefined;
  contentBlocks(content, `${param}.content`).forEach((block, j) => {
    const at = `${param}.content.${j}`;
    switch (block.type) {
      case 'text':
        texts.push({ type: 'text', text: textOf(block, at, unmodeled) });
        break;
      case 'compaction':
        for (const part of decodePartBlock(block, at, unmodeled)) if (part.type === 'text') texts.push(part);
        break;
      case 'tool_use':
        if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalid(at, 'a tool_use block needs id and name strings');
        unmodeled.others(block, at, TOOL_USE, { caller: BLOCK_FIELDS['tool_use.caller'] });
        calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
        break;
      case 'thinking':
        if (typeof block.thinking !== 'string') throw invalid(`${at}.thinking`, 'expected a string');
        unmodeled.others(block, at, THINKING);
        reasoning = (reasoning ?? '') + block.thinking;
        if (typeof block.signature === 'string' && block.signature !== '') signature = block.signature;
        break;
      default:
        recordBlock(block, at, unmodeled);
    }
  });
  const result: AssistantMessage = { role: 'assistant', content: texts.length === 0 ? (calls.length > 0 ? null : '') : texts.length === 1 ? (texts[0] as TextPart).text : texts };
  if (calls.length > 0) result.tool_calls = calls;
  if (reasoning !== undefined) result.reasoning_content = reasoning;
  if (reasoning !== undefined && signature !== undefined) result.reasoning_signature = signature;
  return result;
}
