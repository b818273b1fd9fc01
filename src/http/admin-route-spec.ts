// One admin API route as data: method, path, zod schemas for params, query, body and answer, whether it
// needs an Idempotency-Key, and its handler over the AdminService. admin-routes.ts registers the table,
// admin-openapi.ts documents the same table.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { AdminService } from '../gateway/admin/admin-service.ts';
import type { ChangeContext } from '../gateway/keys/key-store.ts';

export type AdminMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** `required`: refused without the header (creates, rotations); `optional`: honoured when sent. */
export type IdempotencyRule = 'required' | 'optional' | 'none';

export interface AdminCall<P, Q, B> {
  ctx: ChangeContext;
  service: AdminService;
  params: P;
  query: Q;
  body: B;
  /** The Idempotency-Key header, when sent. */
  idempotencyKey: string | undefined;
  now: number;
}

export interface AdminAnswer {
  status: number;
  /** JSON, unless contentType is set: then the text sent as it is. */
  body: unknown;
  contentType?: string | undefined;
  headers?: Readonly<Record<string, string>> | undefined;
  /** A stream (the request tail): the handler's checks passed, the connection is handed over and nothing else is sent. */
  takeOver?: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
}

export interface AdminRouteSpec {
  method: AdminMethod;
  /** Fastify's form: `/admin/v1/keys/:ref`. */
  path: string;
  operationId: string;
  summary: string;
  /** false: no Bearer key needed (the OpenAPI document itself). */
  auth: boolean;
  idempotency: IdempotencyRule;
  params?: z.ZodType | undefined;
  query?: z.ZodType | undefined;
  body?: z.ZodType | undefined;
  status: number;
  response: z.ZodType;
  /** The answer's media type in the document; default application/json. */
  contentType?: string | undefined;
  handle(call: AdminCall<unknown, unknown, unknown>): Promise<AdminAnswer>;
}

interface RouteInput<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: AdminMethod;
  path: string;
  operationId: string;
  summary: string;
  auth?: boolean;
  idempotency?: IdempotencyRule;
  params?: P;
  query?: Q;
  body?: B;
  status?: number;
  response: z.ZodType;
  contentType?: string;
  handle(call: AdminCall<z.output<P>, z.output<Q>, z.output<B>>): Promise<AdminAnswer>;
}

/** A typed route: the handler sees its schemas' outputs; registration validates before it runs. */
export function defineAdminRoute<P extends z.ZodType = z.ZodUndefined, Q extends z.ZodType = z.ZodUndefined, B extends z.ZodType = z.ZodUndefined>(
  input: RouteInput<P, Q, B>,
): AdminRouteSpec {
  const status = input.status ?? 200;
  return {
    method: input.method,
    path: input.path,
    operationId: input.operationId,
    summary: input.summary,
    auth: input.auth ?? true,
    idempotency: input.idempotency ?? (input.method === 'GET' ? 'none' : 'optional'),
    params: input.params,
    query: input.query,
    body: input.body,
    status,
    response: input.response,
    contentType: input.contentType,
    // The registration validated params, query and body with these very schemas.
    handle: input.handle as AdminRouteSpec['handle'],
  };
}

/** The usual answer: the route's status and a JSON body. */
export function answer(status: number, body: unknown): AdminAnswer {
  return { status, body };
}
