// OpenAI's Files API (/v1/files) for batch input: upload (multipart, streamed), list, retrieve, content and delete,
// authenticated as every /v1 route and answered in OpenAI's shapes; the work is gateway/batch/file-service.ts's.
import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { HerdError } from '../core/errors.ts';
import type { FileService, ListFilesQuery } from '../gateway/batch/file-service.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import { authenticate, setOpenAIErrorHandler } from './openai-routes.ts';
import { readMultipartUpload } from './read-multipart-upload.ts';

export interface OpenAIFilesDeps {
  files: FileService;
  authenticator: Authenticator;
  log?: ((line: string) => void) | undefined;
}

const json = (value: unknown) => JSON.stringify(value);

export function registerOpenAIFilesRoutes(app: FastifyInstance, deps: OpenAIFilesDeps, allow: (url: string, methods: string[]) => void): void {
  const { files } = deps;
  void app.register(async (scope) => {
    setOpenAIErrorHandler(scope, deps.log);
    // The body stays a stream here: the upload route reads it part by part (bodyLimit does not apply; batch.files.max_bytes does).
    scope.addContentTypeParser('multipart/form-data', (_req, payload, done) => done(null, payload));

    scope.post('/v1/files', async (req, reply) => {
      const key = authenticate(deps.authenticator, req);
      if (!/^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '')) {
        throw new HerdError('INVALID_ARG', "POST /v1/files takes a multipart/form-data body with the fields 'purpose' and 'file'");
      }
      const upload = await readMultipartUpload(req.body as Readable, req.headers, {
        fileField: 'file',
        onField: (name, value) => {
          if (name === 'purpose') files.checkPurpose(value);
        },
        storeFile: (stream) => files.storeBytes(stream),
        discard: (stored) => files.discard(stored),
      });
      const file = await files.register(key, upload.file?.stored, upload.file?.filename, upload.fields);
      return reply.code(200).header('content-type', 'application/json').send(json(file));
    });

    scope.get('/v1/files', async (req, reply) => {
      const key = authenticate(deps.authenticator, req);
      const query = req.query as Record<string, string | string[] | undefined>;
      const one = (name: keyof ListFilesQuery) => {
        const value = query[name];
        return Array.isArray(value) ? value[0] : value;
      };
      const list = await files.list(key, { purpose: one('purpose'), limit: one('limit'), after: one('after'), order: one('order') });
      return reply.code(200).header('content-type', 'application/json').send(json(list));
    });
    allow('/v1/files', ['GET', 'HEAD', 'POST']);

    scope.get('/v1/files/:id', async (req, reply) => {
      const key = authenticate(deps.authenticator, req);
      const file = await files.retrieve(key, (req.params as { id: string }).id);
      return reply.code(200).header('content-type', 'application/json').send(json(file));
    });
    scope.delete('/v1/files/:id', async (req, reply) => {
      const key = authenticate(deps.authenticator, req);
      const deleted = await files.delete(key, (req.params as { id: string }).id);
      return reply.code(200).header('content-type', 'application/json').send(json(deleted));
    });
    allow('/v1/files/:id', ['GET', 'HEAD', 'DELETE']);

    scope.get('/v1/files/:id/content', async (req, reply) => {
      const key = authenticate(deps.authenticator, req);
      const { file, stream } = await files.content(key, (req.params as { id: string }).id);
      return reply.code(200).header('content-type', 'application/octet-stream').header('content-length', String(file.bytes)).send(stream);
    });
    allow('/v1/files/:id/content', ['GET', 'HEAD']);
  });
}
