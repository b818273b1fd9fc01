// Anthropic's Message Batches (/v1/messages/batches): create (the body streamed to the file store, never whole in
// memory), retrieve, list, cancel, delete and the results JSONL, authenticated and answered as Anthropic's API.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HerdError } from '../core/errors.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';
import { toAnthropicBatch, toAnthropicBatchList, toAnthropicResultLine } from '../gateway/batch/anthropic-batch-object.ts';
import type { BatchLine } from '../gateway/batch/batch-store.ts';
import type { KeyInfo } from '../gateway/keys/key-store.ts';
import { resolveAnthropicAuthorization } from './dialect-edge.ts';
import { fastifyErrorToHerd } from './gateway-exchanges.ts';
import { mapErrorToAnthropic } from './map-anthropic-error.ts';
import type { BatchesDeps } from './openai-batches-routes.ts';
import { queryValue } from './openai-batches-routes.ts';
import type { BaseUrlOf } from './request-base-url.ts';
import { clientAddressOf } from './resolve-client-address.ts';

/** Anthropic's list limit: 1 to 1000, default 20. */
const LIST_LIMIT = { max: 1000, default: 20 };
/** Result lines are sent in chunks of about this many bytes (one write per line would be a syscall each). */
const RESULT_CHUNK_BYTES = 64 * 1024;

const json = (value: unknown) => JSON.stringify(value);

export function registerAnthropicBatchesRoutes(app: FastifyInstance, deps: BatchesDeps, baseUrlOf: BaseUrlOf, allow: (url: string, methods: string[]) => void): void {
  const { batches } = deps;
  const key = (req: FastifyRequest): KeyInfo => {
    const result = deps.authenticator.authenticate(resolveAnthropicAuthorization(req.headers), clientAddressOf(req.raw));
    if (result instanceof HerdError) throw result;
    return result.key;
  };
  const sendBatch = (reply: FastifyReply, value: unknown) => reply.code(200).header('content-type', 'application/json').send(json(value));
  const idOf = (req: FastifyRequest) => (req.params as { id: string }).id;

  void app.register(async (scope) => {
    scope.setErrorHandler((error: Error, _request, reply) => {
      const herd = fastifyErrorToHerd(error);
      if (herd.code === 'INTERNAL') deps.log?.(`gateway error: ${formatErrorForLog(error)}`);
      const answer = mapErrorToAnthropic(herd);
      void reply.code(answer.status).headers(answer.headers).header('content-type', 'application/json').send(json(answer.body));
    });
    // The body stays a stream here: a Message Batch may be 256 MB, so it goes to the file store as it arrives
    // (server.http_max_input_size does not apply; Anthropic's 256 MB does).
    scope.addContentTypeParser('application/json', (_req, payload, done) => done(null, payload));

    scope.post('/v1/messages/batches', async (req, reply) => {
      const owner = key(req);
      const view = await batches.createAnthropic(owner, bodyStream(req.body));
      return sendBatch(reply, toAnthropicBatch(view, baseUrlOf(req.raw)));
    });
    scope.get('/v1/messages/batches', async (req, reply) => {
      const owner = key(req);
      const page = await listPage(deps, owner, req);
      return sendBatch(reply, toAnthropicBatchList(page.items, page.hasMore, baseUrlOf(req.raw)));
    });
    allow('/v1/messages/batches', ['GET', 'HEAD', 'POST']);

    scope.get('/v1/messages/batches/:id', async (req, reply) => sendBatch(reply, toAnthropicBatch(await batches.get(key(req), 'anthropic', idOf(req)), baseUrlOf(req.raw))));
    scope.delete('/v1/messages/batches/:id', async (req, reply) => {
      const { id } = await batches.remove(key(req), idOf(req));
      return sendBatch(reply, { id, type: 'message_batch_deleted' });
    });
    allow('/v1/messages/batches/:id', ['GET', 'HEAD', 'DELETE']);

    scope.post('/v1/messages/batches/:id/cancel', async (req, reply) =>
      sendBatch(reply, toAnthropicBatch(await batches.cancel(key(req), 'anthropic', idOf(req)), baseUrlOf(req.raw))),
    );
    allow('/v1/messages/batches/:id/cancel', ['POST']);

    scope.get('/v1/messages/batches/:id/results', async (req, reply) => {
      const id = idOf(req);
      const lines = await batches.openResults(key(req), 'anthropic', id);
      return reply
        .code(200)
        .header('content-type', 'application/x-jsonl')
        .header('content-disposition', `attachment; filename*=utf-8''${encodeURIComponent(id)}_results.jsonl`)
        .send(Readable.from(resultChunks(lines), { objectMode: false }));
    });
    allow('/v1/messages/batches/:id/results', ['GET', 'HEAD']);
  });
}

/** The request body as bytes arriving: the stream the JSON parser above passed on, or a buffered body of another content type. */
function bodyStream(body: unknown): AsyncIterable<Buffer | Uint8Array> {
  if (body instanceof Readable) return body;
  if (Buffer.isBuffer(body)) return Readable.from([body]);
  throw new HerdError('INVALID_ARG', 'POST /v1/messages/batches takes a JSON body: {"requests": [{"custom_id", "params"}, ...]}');
}

/**
 * Anthropic lists newest first. after_id: the older page after that batch; before_id: the newer page before it,
 * read oldest first from the cursor (the store's `after` in ascending order) and turned around.
 */
async function listPage(deps: BatchesDeps, owner: KeyInfo, req: FastifyRequest) {
  const limit = parseLimit(queryValue(req, 'limit'));
  const afterId = nonEmpty(queryValue(req, 'after_id'));
  const beforeId = nonEmpty(queryValue(req, 'before_id'));
  if (afterId !== undefined && beforeId !== undefined) throw new HerdError('INVALID_ARG', 'Only one of before_id and after_id may be given', { param: 'before_id' });
  if (beforeId === undefined) return deps.batches.list(owner, 'anthropic', { after: afterId, limit, order: 'desc' });
  const page = await deps.batches.list(owner, 'anthropic', { after: beforeId, limit, order: 'asc' });
  return { items: page.items.reverse(), hasMore: page.hasMore };
}

async function* resultChunks(lines: AsyncIterable<BatchLine>): AsyncGenerator<Buffer> {
  let chunk = '';
  for await (const line of lines) {
    chunk += `${json(toAnthropicResultLine(line))}\n`;
    if (chunk.length >= RESULT_CHUNK_BYTES) {
      yield Buffer.from(chunk);
      chunk = '';
    }
  }
  if (chunk !== '') yield Buffer.from(chunk);
}

const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

function parseLimit(limit: string | undefined): number {
  if (limit === undefined || limit === '') return LIST_LIMIT.default;
  const n = Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > LIST_LIMIT.max) throw new HerdError('INVALID_ARG', `limit: must be an integer from 1 to ${LIST_LIMIT.max}`, { param: 'limit' });
  return n;
}
