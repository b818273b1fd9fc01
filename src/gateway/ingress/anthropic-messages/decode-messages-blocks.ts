// Anthropic content blocks that become canonical content parts (text, image, document, search_result,
// compaction), validated where Anthropic validates them; what has no part is recorded by its table row.
import { HerdError } from '../../../core/errors.ts';
import type { TextPart, UserContentPart } from '../../protocol/chat-types.ts';
import { describeValue, isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';
import { BLOCK_FIELDS, type FieldRow } from './messages-field-table.ts';
import type { UnmodeledFields } from './unmodeled-fields.ts';

export const invalid = (param: string, message: string) => new HerdError('INVALID_ARG', `${param}: ${message}`, { param });

const known = (...members: string[]): ReadonlySet<string> => new Set(['type', 'cache_control', ...members]);
const TEXT = known('text');
const IMAGE = known('source');
const DOCUMENT = known('source', 'title', 'context');
const SEARCH_RESULT = known('source', 'title', 'content');
const COMPACTION = known('content');
const DATA_SOURCE: ReadonlySet<string> = new Set(['type', 'media_type', 'data']);
const URL_SOURCE: ReadonlySet<string> = new Set(['type', 'url']);
const CONTENT_SOURCE: ReadonlySet<string> = new Set(['type', 'content']);
/** Types the decoder maps somewhere: met where the turn has no place for them, they are misplaced, not unknown. */
const MAPPED_BLOCK_TYPES: ReadonlySet<string> = new Set(['text', 'image', 'document', 'search_result', 'compaction', 'thinking', 'tool_use', 'tool_result']);

/** Block types whose content has a canonical part in a user (or system) turn. */
export const PART_BLOCK_TYPES: ReadonlySet<string> = new Set(['text', 'image', 'document', 'search_result', 'compaction']);

/** A content array's blocks, each an object with a string type (Anthropic refuses anything else). */
export function contentBlocks(content: unknown, param: string): JsonObject[] {
  if (!Array.isArray(content)) throw invalid(param, `expected a string or an array of content blocks, got ${describeValue(content)}`);
  return content.map((block, j) => {
    if (!isJsonObject(block) || typeof block.type !== 'string') throw invalid(`${param}.${j}`, 'expected a content block with a type');
    return block;
  });
}

export function textOf(block: JsonObject, param: string, unmodeled: UnmodeledFields): string {
  if (typeof block.text !== 'string') throw invalid(`${param}.text`, 'expected a string');
  unmodeled.others(block, param, TEXT, { citations: BLOCK_FIELDS['text.citations'] });
  return block.text;
}

/** The parts of one part-block (see PART_BLOCK_TYPES); an empty array when it was recorded instead. */
export function decodePartBlock(block: JsonObject, param: string, unmodeled: UnmodeledFields): UserContentPart[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: textOf(block, param, unmodeled) }];
    case 'image': {
      const image = decodeImage(block, param, unmodeled);
      return image === undefined ? [] : [image];
    }
    case 'document':
      return decodeDocument(block, param, unmodeled);
    case 'search_result':
      return [decodeSearchResult(block, param, unmodeled)];
    case 'compaction':
      return decodeCompaction(block, param, unmodeled);
    default:
      recordBlock(block, param, unmodeled);
      return [];
  }
}

/** A block with no canonical part here: misplaced when it maps elsewhere, else its own row, else an unknown type. */
export function recordBlock(block: JsonObject, param: string, unmodeled: UnmodeledFields): void {
  const type = String(block.type);
  // A type names its own row only as a plain word: `text.citations` or `misplaced block` are not block types.
  const own: FieldRow | undefined = /^[a-z0-9_]+$/.test(type) && Object.hasOwn(BLOCK_FIELDS, type) ? BLOCK_FIELDS[type as keyof typeof BLOCK_FIELDS] : undefined;
  unmodeled.add(param, MAPPED_BLOCK_TYPES.has(type) ? BLOCK_FIELDS['misplaced block'] : (own ?? BLOCK_FIELDS['other block type']), block);
}

function decodeImage(block: JsonObject, param: string, unmodeled: UnmodeledFields): UserContentPart | undefined {
  const source = block.source;
  const at = `${param}.source`;
  if (!isJsonObject(source)) throw invalid(at, 'expected an image source object');
  unmodeled.others(block, param, IMAGE);
  if (source.type === 'base64') {
    if (typeof source.media_type !== 'string' || typeof source.data !== 'string') throw invalid(at, 'a base64 source needs media_type and data strings');
    unmodeled.others(source, at, DATA_SOURCE);
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  }
  if (source.type === 'url') {
    if (typeof source.url !== 'string') throw invalid(`${at}.url`, 'expected a string');
    unmodeled.others(source, at, URL_SOURCE);
    return { type: 'image_url', image_url: { url: source.url } };
  }
  unmodeled.add(param, BLOCK_FIELDS['image (file or other source)'], block);
  return undefined;
}

/** Title and context lead, as a reader of the document would see them. */
function decodeDocument(block: JsonObject, param: string, unmodeled: UnmodeledFields): UserContentPart[] {
  const source = block.source;
  const at = `${param}.source`;
  if (!isJsonObject(source)) throw invalid(at, 'expected a document source object');
  const lead = [optionalString(block.title, `${param}.title`), optionalString(block.context, `${param}.context`)].filter((s): s is string => s !== undefined && s !== '');
  const leading: TextPart[] = lead.length === 0 ? [] : [{ type: 'text', text: lead.join('\n\n') }];
  switch (source.type) {
    case 'text': {
      if (typeof source.data !== 'string') throw invalid(`${at}.data`, 'expected a string');
      unmodeled.others(block, param, DOCUMENT, { citations: BLOCK_FIELDS['document.citations'] });
      unmodeled.others(source, at, DATA_SOURCE);
      return [{ type: 'text', text: [...lead, source.data].join('\n\n') }];
    }
    case 'content': {
      unmodeled.others(block, param, DOCUMENT, { citations: BLOCK_FIELDS['document.citations'] });
      unmodeled.others(source, at, CONTENT_SOURCE);
      if (typeof source.content === 'string') return [...leading, { type: 'text', text: source.content }];
      const parts = contentBlocks(source.content, `${at}.content`).flatMap((inner, k) => {
        const innerAt = `${at}.content.${k}`;
        if (inner.type === 'text' || inner.type === 'image') return decodePartBlock(inner, innerAt, unmodeled);
        recordBlock(inner, innerAt, unmodeled);
        return [];
      });
      return [...leading, ...parts];
    }
    case 'base64':
      unmodeled.add(param, BLOCK_FIELDS['document (base64)'], block);
      return [];
    case 'url':
      unmodeled.add(param, BLOCK_FIELDS['document (url)'], block);
      return [];
    default:
      unmodeled.add(param, BLOCK_FIELDS['document (file or other source)'], block);
      return [];
  }
}

function decodeSearchResult(block: JsonObject, param: string, unmodeled: UnmodeledFields): TextPart {
  const title = optionalString(block.title, `${param}.title`) ?? '';
  const source = optionalString(block.source, `${param}.source`) ?? '';
  const texts = contentBlocks(block.content, `${param}.content`).map((inner, k) => {
    if (inner.type !== 'text') throw invalid(`${param}.content.${k}`, 'expected a text block');
    return textOf(inner, `${param}.content.${k}`, unmodeled);
  });
  unmodeled.others(block, param, SEARCH_RESULT, { citations: BLOCK_FIELDS['search_result.citations'] });
  return { type: 'text', text: [[title, source].filter((s) => s !== '').join('\n'), ...texts].filter((s) => s !== '').join('\n\n') };
}

/** The summary is the history it replaced; without one the block is opaque state. */
function decodeCompaction(block: JsonObject, param: string, unmodeled: UnmodeledFields): UserContentPart[] {
  const summary = optionalString(block.content, `${param}.content`);
  if (summary === undefined || summary === '') {
    unmodeled.add(param, BLOCK_FIELDS['compaction (no summary)'], block);
    return [];
  }
  unmodeled.others(block, param, COMPACTION);
  return [{ type: 'text', text: summary }];
}

function optionalString(value: unknown, param: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(param, `expected a string, got ${describeValue(value)}`);
  return value;
}
