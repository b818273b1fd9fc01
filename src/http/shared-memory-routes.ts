// Triton's shared-memory extension over HTTP: /v2/systemsharedmemory[/region/{name}]/status|register|unregister
// and the CUDA forms, answered as a server without GPUs. The registry itself is on the serving side.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HerdError, invalidArg } from '../core/errors.ts';
import { describeCudaSharedMemory, registerCudaSharedMemory } from '../serving/shared-memory/cuda-shared-memory.ts';
import type { SystemSharedMemoryRegistry } from '../serving/shared-memory/system-shared-memory-registry.ts';
import { sendJson } from './send-body.ts';

type RegionParams = { region?: string };
type Route = (req: FastifyRequest<{ Params: RegionParams }>, reply: FastifyReply) => unknown;

export function registerSharedMemoryRoutes(app: FastifyInstance, shm: SystemSharedMemoryRegistry, allow: (url: string, methods: string[]) => void): void {
  const route = (method: 'GET' | 'POST', url: string, handler: Route) => {
    if (method === 'GET') app.get<{ Params: RegionParams }>(url, handler);
    else app.post<{ Params: RegionParams }>(url, handler);
    allow(url, method === 'GET' ? ['GET', 'HEAD'] : ['POST']);
  };
  for (const base of ['/v2/systemsharedmemory', '/v2/systemsharedmemory/region/:region']) {
    route('GET', `${base}/status`, (req, reply) => sendJson(reply, 200, shm.status(req.params.region)));
    route('POST', `${base}/unregister`, (req, reply) => {
      shm.unregister(req.params.region);
      return reply.code(200).send();
    });
  }
  route('POST', '/v2/systemsharedmemory/region/:region/register', (req, reply) => {
    const body = parseBody(req.body);
    const key = body['key'];
    if (key === undefined) throw invalidArg("Shared memory register request has no 'key' field");
    if (typeof key !== 'string') throw invalidArg("Unable to parse 'key' of the shared memory register request: expected a string");
    const offset = body['offset'] ?? 0;
    const byteSize = body['byte_size'];
    if (byteSize === undefined) throw invalidArg("Shared memory register request has no 'byte_size' field");
    if (!isUnsigned(offset)) throw invalidArg("Unable to parse 'offset' of the shared memory register request: expected a non-negative integer");
    if (!isUnsigned(byteSize)) throw invalidArg("Unable to parse 'byte_size' of the shared memory register request: expected a non-negative integer");
    shm.register(req.params.region ?? '', key, offset, byteSize);
    return reply.code(200).send();
  });

  for (const base of ['/v2/cudasharedmemory', '/v2/cudasharedmemory/region/:region']) {
    route('GET', `${base}/status`, (req, reply) => sendJson(reply, 200, describeCudaSharedMemory(req.params.region)));
    route('POST', `${base}/unregister`, (_req, reply) => reply.code(200).send());
  }
  route('POST', '/v2/cudasharedmemory/region/:region/register', (req) => registerCudaSharedMemory(req.params.region ?? ''));
}

function parseBody(body: unknown): Record<string, unknown> {
  if (!Buffer.isBuffer(body) || body.length === 0) throw invalidArg('Shared memory register request has no body');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new HerdError('INVALID_ARG', `failed to parse the request JSON buffer: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalidArg('request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

function isUnsigned(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
