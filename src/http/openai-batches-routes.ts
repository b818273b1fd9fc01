// OpenAI's Batch API (/v1/batches): create, retrieve, list and cancel, authenticated as every /v1 route and answered
// in OpenAI's shapes; the work is gateway/batch/batch-service.ts's. A batch refused at validation is a 200 `failed` batch.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HerdError } from '../core/errors.ts';
import type { BatchService, CreateOpenAIBatch } from '../gateway/batch/batch-service.ts';
import { toOpenAIBatch, toOpenAIBatchList } from '../gateway/batch/openai-batch-object.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import { authenticate, setOpenAIErrorHandler } from './openai-routes.ts';
import { parseJsonBody } from './parse-json-body.ts';

export interface BatchesDeps {
  batches: BatchService;
  authenticator: Authenticator;
  log?: ((line: string) => void) | undefined;
}

/** OpenAI's metadata bounds: 16 pairs, keys up to 64 characters, values up to 512. */
const METADATA = { pairs: 16, keyChars: 64, valueChars: 512 };
/** OpenAI's list limit: 1 to 100, default 20. */
const LIST_LIMIT = { max: 100, default: 20 };

const json = (value: unknown) => JSON.stringify(value);

export function registerOpenAIBatchesRoutes(app: FastifyInstance, deps: BatchesDeps, allow: (url: string, methods: string[]) => void): void {
  const { batches } = deps;
  void app.register(async (scope) => {
    setOpenAIErrorHandler(scope, deps.log);

    scope.post('/v1/batches', async (req, reply) => {
      const key = authenticate(deps.authenticator, req);
      const view = await batches.createOpenAI(key, parseCreateBody(parseJsonBody(Buffer.isBuffer(req.body) ? req.body : undefined)));
      return reply
        .code(200)
        .header('content-type', 'application/json')
        .send(json(toOpenAIBatch(view)));
    });
    scope.get('/v1/batches', async (req, reply) => {
      const key = authenticate(deps.authenticator, req);
      const after = queryValue(req, 'after');
      const page = await batches.list(key, 'openai', { after: after === '' ? undefined : after, limit: parseLimit(queryValue(req, 'limit')), order: 'desc' });
      return reply
        .code(200)
        .header('content-type', 'application/json')
        .send(json(toOpenAIBatchList(page.items, page.hasMore)));
    });
    allow('/v1/batches', ['GET', 'HEAD', 'POST']);

    scope.get('/v1/batches/:id', async (req, reply) => {
      const key = authenticate(deps.authenticator, req);
      const view = await batches.get(key, 'openai', (req.params as { id: string }).id);
      return reply
        .code(200)
        .header('content-type', 'application/json')
        .send(json(toOpenAIBatch(view)));
    });
    allow('/v1/batches/:id', ['GET', 'HEAD']);

    scope.post('/v1/batches/:id/cancel', async (req, reply) => {
      const key = authenticate(deps.authenticator, req);
      const view = await batches.cancel(key, 'openai', (req.params as { id: string }).id);
      return reply
        .code(200)
        .header('content-type', 'application/json')
        .send(json(toOpenAIBatch(view)));
    });
    allow('/v1/batches/:id/cancel', ['POST']);
  });
}

/** The query parameter's first value, as sent. */
export function queryValue(req: FastifyRequest, name: string): string | undefined {
  const value = (req.query as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

/** POST /v1/batches' body: the three required strings and metadata checked; other fields pass (OpenAI adds fields over time). */
export function parseCreateBody(body: unknown): CreateOpenAIBatch {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HerdError('INVALID_ARG', 'The request body must be a JSON object.');
  const fields = body as Record<string, unknown>;
  return {
    inputFileId: requiredString(fields, 'input_file_id'),
    endpoint: requiredString(fields, 'endpoint'),
    completionWindow: requiredString(fields, 'completion_window'),
    metadata: parseMetadata(fields.metadata),
  };
}

function requiredString(fields: Record<string, unknown>, name: string): string {
  const value = fields[name];
  if (value === undefined || value === null) throw new HerdError('INVALID_ARG', `'${name}' is a required property`, { param: name });
  if (typeof value !== 'string') throw new HerdError('INVALID_ARG', `${describe(value)} is not of type 'string' - '${name}'`, { param: name });
  return value;
}

function parseMetadata(value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new HerdError('INVALID_ARG', `${describe(value)} is not of type 'object' - 'metadata'`, { param: 'metadata' });
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > METADATA.pairs) {
    throw new HerdError('INVALID_ARG', `'metadata' has ${entries.length} properties; at most ${METADATA.pairs} are allowed`, { param: 'metadata' });
  }
  const metadata: Record<string, string> = {};
  for (const [key, item] of entries) {
    const param = `metadata.${key.slice(0, METADATA.keyChars)}`;
    if (key.length > METADATA.keyChars) throw new HerdError('INVALID_ARG', `metadata keys may be at most ${METADATA.keyChars} characters long`, { param });
    if (typeof item !== 'string') throw new HerdError('INVALID_ARG', `${describe(item)} is not of type 'string' - '${param}'`, { param });
    if (item.length > METADATA.valueChars) throw new HerdError('INVALID_ARG', `metadata values may be at most ${METADATA.valueChars} characters long`, { param });
    metadata[key] = item;
  }
  return metadata;
}

function parseLimit(limit: string | undefined): number {
  if (limit === undefined || limit === '') return LIST_LIMIT.default;
  const n = Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > LIST_LIMIT.max) throw new HerdError('INVALID_ARG', `'limit' must be an integer from 1 to ${LIST_LIMIT.max}`, { param: 'limit' });
  return n;
}

/** A value for an error message, bounded (a client's text is echoed only this far). */
function describe(value: unknown): string {
  return (JSON.stringify(value) ?? String(value)).slice(0, 64);
}
