// Submission's check of a whole batch (docs/decisions/batch-design.md, "Submission"), streaming: every request
// parsed as it goes past, custom_id unique, OpenAI's method and url rules, the body checked as its realtime
// endpoint checks it (checkBody), and the batch's maximum cost summed. Failures come back as OpenAI's batch
// `errors.data[]` items, with line numbers; valid lines go to a sink as byte ranges of the stored file.
import { HerdError } from '../../core/errors.ts';
import { addMicros, type Micros } from '../billing/money.ts';
import type { KeyInfo } from '../keys/key-store.ts';
import { describeValue, isJsonObject, type JsonObject } from '../protocol/check-json-value.ts';
import type { BatchSourceRecord } from '../wire/jsonl-line-source.ts';
import type { CheckLineBody, LinePlan } from './validate-batch-line.ts';
import { CustomIdSet } from './validate-custom-ids.ts';

/** OpenAI's batch failures list the first errors, not all of them. */
export const MAX_REPORTED_ERRORS = 100;
/** Nesting the realtime routes allow in a body (docs/security.md, "JSON nesting depth"). */
const MAX_JSON_DEPTH = 128;
/** Anthropic's rule for a request's custom_id. */
const ANTHROPIC_CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** OpenAI: each line `{custom_id, method, url, body}`; Anthropic: each item of `requests`, `{custom_id, params}`. */
export type BatchFormat = 'openai' | 'anthropic';

/** One failure, as OpenAI's batch object lists it in `errors.data[]`; `line` is absent for the file as a whole. */
export interface BatchLineError {
  code: string;
  message: string;
  param: string | null;
  line?: number;
}

/** A line that passed, as the batch store keeps it: where its bytes are in the stored file, never a copy. */
export interface ValidBatchLine extends LinePlan {
  lineNo: number;
  customId: string;
  /** The whole record (the JSONL line; the `requests` item), whose `body` / `params` the worker reads back. */
  byteOffset: number;
  byteLength: number;
}

export interface ValidateBatchInput {
  records: AsyncIterable<BatchSourceRecord>;
  format: BatchFormat;
  /** The batch's endpoint (`/v1/chat/completions`, …): every OpenAI line's `url` must be it. */
  endpoint: string;
  key: KeyInfo;
  checkBody: CheckLineBody;
  /**
   * Each valid line, in order, until a line fails: a batch with a failure is refused whole, so the caller
   * discards what it was given. A returned promise is awaited (a store writing lines in chunks).
   */
  onLine?: ((line: ValidBatchLine) => void | Promise<void>) | undefined;
  /** More requests than this: the batch is refused (reading stops there). */
  maxRequests?: number | undefined;
  /** The budget left: the result names the first line whose running total of maximum costs passes it. */
  costLimitMicros?: Micros | undefined;
  maxErrors?: number | undefined;
}

export interface BatchValidation {
  /** True when nothing failed: the batch may be created. */
  ok: boolean;
  /** Requests read (blank lines are not requests). */
  total: number;
  valid: number;
  /** Requests that failed; `errors` holds the first `maxErrors` failures. */
  failed: number;
  errors: BatchLineError[];
  totalMaxCostMicros: Micros;
  /** The first line at which the valid lines' maximum costs summed past costLimitMicros. */
  overLimitAtLine: number | undefined;
}

type Checked = { line: ValidBatchLine } | { error: Omit<BatchLineError, 'line'> };

export async function validateBatchFile(input: ValidateBatchInput): Promise<BatchValidation> {
  const maxErrors = input.maxErrors ?? MAX_REPORTED_ERRORS;
  const ids = new CustomIdSet();
  const result: BatchValidation = { ok: true, total: 0, valid: 0, failed: 0, errors: [], totalMaxCostMicros: 0, overLimitAtLine: undefined };
  const fail = (error: BatchLineError) => {
    if (result.errors.length < maxErrors) result.errors.push(error);
  };
  for await (const record of input.records) {
    result.total += 1;
    if (input.maxRequests !== undefined && result.total > input.maxRequests) {
      fail({ code: 'batch_too_large', message: `The batch has more than ${input.maxRequests} requests, the most one batch may hold.`, param: null });
      break;
    }
    const checked = await checkRecord(record, input, ids);
    if ('error' in checked) {
      result.failed += 1;
      fail({ ...checked.error, line: record.lineNo });
      continue;
    }
    result.valid += 1;
    result.totalMaxCostMicros = addMicros(result.totalMaxCostMicros, checked.line.maxCostMicros);
    if (input.costLimitMicros !== undefined && result.overLimitAtLine === undefined && result.totalMaxCostMicros > input.costLimitMicros) {
      result.overLimitAtLine = record.lineNo;
    }
    if (result.failed === 0 && input.onLine !== undefined) {
      const written = input.onLine(checked.line);
      if (written !== undefined) await written;
    }
  }
  if (result.total === 0) fail({ code: 'empty_file', message: 'The batch holds no requests.', param: null });
  result.ok = result.failed === 0 && result.errors.length === 0;
  return result;
}

async function checkRecord(record: BatchSourceRecord, input: ValidateBatchInput, ids: CustomIdSet): Promise<Checked> {
  if (record.bytes === undefined) {
    return refuse('line_too_long', `This request is ${record.byteLength} bytes long, more than one batch request may be.`, null);
  }
  const parsed = parseRecord(record.bytes);
  if ('error' in parsed) return parsed;
  const value = parsed.value;
  const openai = input.format === 'openai';
  const fields = openai ? checkOpenAIFields(value, input.endpoint) : checkAnthropicFields(value);
  if ('error' in fields) return fields;
  const earlier = ids.add(fields.customId, record.lineNo);
  if (earlier !== undefined) {
    return refuse(
      'duplicate_custom_id',
      `The custom_id ${describeValue(fields.customId)} is already used on line ${earlier}: each request's custom_id must be unique.`,
      'custom_id',
    );
  }
  let plan: LinePlan;
  try {
    plan = await input.checkBody(fields.body, input.key);
  } catch (err) {
    if (!(err instanceof HerdError) || CODE_OF[err.code] === undefined) throw err;
    const prefix = openai ? 'body' : 'params';
    return refuse(err.reason ?? CODE_OF[err.code]!, err.message, err.param === undefined ? prefix : `${prefix}.${err.param}`);
  }
  return { line: { lineNo: record.lineNo, customId: fields.customId, byteOffset: record.byteOffset, byteLength: record.byteLength, ...plan } };
}

/** The body's refusals that are the line's fault, as the batch error `code` says them; anything else is Herd's and is thrown. */
const CODE_OF: Partial<Record<HerdError['code'], string>> = {
  INVALID_ARG: 'invalid_request',
  UNSUPPORTED: 'unsupported_parameter',
  NOT_FOUND: 'model_not_found',
  PERMISSION_DENIED: 'permission_denied',
  PAYLOAD_TOO_LARGE: 'request_too_large',
};

const refuse = (code: string, message: string, param: string | null): { error: Omit<BatchLineError, 'line'> } => ({ error: { code, message, param } });

/** The record's JSON object, or the error that says why it is none. */
function parseRecord(bytes: Buffer): { value: JsonObject } | { error: Omit<BatchLineError, 'line'> } {
  if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) {
    return refuse('invalid_json_line', `This request nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects, which the server refuses.`, null);
  }
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    return refuse('invalid_json_line', `This line is not parseable as valid JSON (${(err as Error).message}).`, null);
  }
  if (!isJsonObject(value)) return refuse('invalid_json_line', `This line must be a JSON object, not ${describeValue(value)}.`, null);
  return { value };
}

type Fields = { customId: string; body: unknown } | { error: Omit<BatchLineError, 'line'> };

function checkOpenAIFields(value: JsonObject, endpoint: string): Fields {
  const { custom_id: customId, method, url, body } = value;
  for (const [name, field] of [
    ['custom_id', customId],
    ['method', method],
    ['url', url],
    ['body', body],
  ] as const) {
    if (field === undefined || field === null) return refuse('missing_required_parameter', `Missing required parameter: '${name}'.`, name);
  }
  if (typeof customId !== 'string' || customId === '') return refuse('invalid_custom_id', `'custom_id' must be a non-empty string, not ${describeValue(customId)}.`, 'custom_id');
  if (method !== 'POST') return refuse('invalid_method', `'method' must be "POST", not ${describeValue(method)}.`, 'method');
  if (url !== endpoint) return refuse('invalid_url', `'url' is ${describeValue(url)}, but this batch's endpoint is ${endpoint}: every request must use it.`, 'url');
  if (!isJsonObject(body)) return refuse('invalid_request', `'body' must be a JSON object, not ${describeValue(body)}.`, 'body');
  return { customId, body };
}

function checkAnthropicFields(value: JsonObject): Fields {
  const { custom_id: customId, params } = value;
  if (customId === undefined || customId === null) return refuse('missing_required_parameter', "Missing required parameter: 'custom_id'.", 'custom_id');
  if (typeof customId !== 'string' || !ANTHROPIC_CUSTOM_ID.test(customId)) {
    return refuse('invalid_custom_id', `'custom_id' must be 1 to 64 letters, digits, '_' or '-', not ${describeValue(customId)}.`, 'custom_id');
  }
  if (params === undefined || params === null) return refuse('missing_required_parameter', "Missing required parameter: 'params'.", 'params');
  if (!isJsonObject(params)) return refuse('invalid_request', `'params' must be a JSON object, not ${describeValue(params)}.`, 'params');
  return { customId, body: params };
}

/** Whether the JSON text nests arrays and objects deeper than `limit` (brackets inside strings do not count). */
function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
