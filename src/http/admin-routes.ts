// The admin API: /admin/v1/… (keys, teams, usage, audit, catalogue; OpenAPI at /admin/v1/openapi.json)
// over the AdminService, and the older GET /admin/usage. Here only HTTP: Bearer sign-in (audited),
// validation by the route table's schemas, Idempotency-Key replay, and errors in OpenAI's shape.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { HerdError, toHerdError } from '../core/errors.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';
import { actorOfKey } from '../gateway/admin/admin-roles.ts';
import type { AdminService } from '../gateway/admin/admin-service.ts';
import type { AuditAggregator } from '../gateway/admin/audit-aggregator.ts';
import type { Ledger } from '../gateway/billing/ledger.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import type { ChangeContext } from '../gateway/keys/key-store.ts';
import { type ConsoleApi, createConsoleRoutes } from './admin-console-routes.ts';
import { ADMIN_KEY_ROUTES } from './admin-key-routes.ts';
import { buildAdminOpenApi, toJsonSchema } from './admin-openapi.ts';
import { ADMIN_READ_ROUTES, ADMIN_TEAM_ROUTES } from './admin-read-routes.ts';
import type { AdminAnswer, AdminRouteSpec } from './admin-route-spec.ts';
import { defineAdminRoute } from './admin-route-spec.ts';
import { openApiJson } from './admin-schemas.ts';
import { registerLegacyUsageRoute, sendAdminError } from './admin-usage-route.ts';
import { parseJsonBody } from './parse-json-body.ts';
import { clientAddressOf } from './resolve-client-address.ts';
import type { ConsoleSessionAuth } from './console/session-auth.ts';
import { isMutatingMethod, usesSessionCookie } from './console/session-cookie.ts';

export interface AdminDeps {
  authenticator: Pick<Authenticator, 'authenticate'>;
  /** The /admin/v1 API; absent: only GET /admin/usage. */
  service?: AdminService | undefined;
  /** Where sign-ins are counted (one audit row per key, action and minute). */
  audit?: Pick<AuditAggregator, 'record'> | undefined;
  /** GET /admin/usage's report; absent with billing.ledger: off. */
  ledger?: Pick<Ledger, 'usage'> | undefined;
  /** Named in messages (auth.master_key_env). */
  masterKeyEnv?: string;
  /** Wall clock, epoch ms (tests pin it). */
  now?: () => number;
  log?: (line: string) => void;
  /** The web console's data routes (overview, requests and their tail, spend, deployments, serving); absent: they answer 404. */
  console?: ConsoleApi | undefined;
  /** The console's session cookie, accepted when a request sends no Authorization header. */
  session?: ConsoleSessionAuth | undefined;
}

const OPENAPI_PATH = '/admin/v1/openapi.json';
const REPLAYED_HEADER = 'idempotent-replayed';

/** Every /admin/v1 route, the OpenAPI document's own included; the console's read `console` (the same table without it, for the document). */
export function listAdminRoutes(console?: ConsoleApi): AdminRouteSpec[] {
  const specs: AdminRouteSpec[] = [...ADMIN_KEY_ROUTES, ...ADMIN_TEAM_ROUTES, ...ADMIN_READ_ROUTES, ...createConsoleRoutes(() => console)];
  const self = defineAdminRoute({
    method: 'GET',
    path: OPENAPI_PATH,
    operationId: 'getOpenApi',
    summary: "This document: the admin API's OpenAPI 3.1 description, generated from the route schemas",
    auth: false,
    response: openApiJson,
    handle: async () => ({ status: 200, body: document }),
  });
  const document = buildAdminOpenApi([...specs, self]);
  return [...specs, self];
}

export function registerAdminRoutes(app: FastifyInstance, deps: AdminDeps, allow: (url: string, methods: string[]) => void): void {
  void app.register(async (scope) => {
    scope.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
      const herd =
        error instanceof HerdError ? error : typeof error.statusCode === 'number' && error.statusCode < 500 ? new HerdError('INVALID_ARG', error.message) : toHerdError(error);
      if (herd.code === 'INTERNAL') deps.log?.(`admin error: ${formatErrorForLog(error)}`);
      sendAdminError(reply, herd);
    });
    if (deps.ledger) registerLegacyUsageRoute(scope, { ...deps, ledger: deps.ledger }, allow);
    const service = deps.service;
    if (!service) return;
    const specs = listAdminRoutes(deps.console);
    // Open tails would hold the server's close for ever.
    const tails = deps.console?.tails;
    if (tails)
      scope.addHook('preClose', (done) => {
        tails.closeAll();
        done();
      });
    const schemas = new Map<string, z.ZodType>();
    for (const spec of specs) {
      for (const part of ['params', 'query', 'body'] as const) {
        const schema = spec[part];
        if (schema) schemas.set(`${spec.method} ${spec.path} ${part === 'query' ? 'querystring' : part}`, schema);
      }
    }
    // Validation is zod's, by the very schemas the JSON Schemas below were generated from.
    scope.setValidatorCompiler(({ method, url, httpPart }) => {
      const schema = schemas.get(`${method} ${url} ${httpPart}`);
      return (data: unknown) => (schema === undefined ? { value: data } : validatePart(schema, httpPart ?? '', data));
    });
    // Answers are sent as JSON text; the response schemas are for the document (and its test).
    scope.setSerializerCompiler(() => (data: unknown) => JSON.stringify(data));
    for (const spec of specs) registerSpec(scope, spec, service, deps);
    for (const path of new Set(specs.map((s) => s.path))) {
      const methods = specs.filter((s) => s.path === path).map((s) => s.method);
      allow(path, methods.includes('GET') ? [...methods, 'HEAD'] : methods);
    }
  });
}

function registerSpec(scope: FastifyInstance, spec: AdminRouteSpec, service: AdminService, deps: AdminDeps): void {
  scope.route({
    method: spec.method,
    url: spec.path,
    schema: {
      ...(spec.params ? { params: toJsonSchema(spec.params, 'input') } : {}),
      ...(spec.query ? { querystring: toJsonSchema(spec.query, 'input') } : {}),
      ...(spec.body ? { body: toJsonSchema(spec.body, 'input') } : {}),
      response: { [spec.status]: toJsonSchema(spec.response, 'output') },
    },
    handler: async (req, reply) => {
      const ctx = spec.auth ? await signIn(req, deps) : { actor: { id: 'anonymous', name: 'anonymous', role: 'client' as const } };
      const idempotencyKey = readIdempotencyKey(req, spec);
      const call = { ctx, service, params: req.params, query: req.query, body: req.body, idempotencyKey, now: (deps.now ?? Date.now)() };
      if (idempotencyKey === undefined) return send(req, reply, await spec.handle(call));
      // The store seals the answer (a new secret included) under the key: only the same caller with the same key opens it.
      const result = await service.idempotent(ctx, idempotencyKey, fingerprintOf(req, req.body), async () => {
        const live = await spec.handle(call);
        return { status: live.status, body: JSON.stringify(live.body) };
      });
      if (result.replayed) reply.header(REPLAYED_HEADER, 'true');
      return reply.code(result.status).header('content-type', 'application/json').send(result.body);
    },
  });
}

/**
 * The caller as an audit actor; a sign-in (or a failed one) is counted for the audit log either way. Without an
 * Authorization header the console's session cookie may stand for the key (its CSRF token on mutating calls).
 */
async function signIn(req: FastifyRequest, deps: AdminDeps): Promise<ChangeContext> {
  const sourceIp = clientAddressOf(req.raw).address;
  const header = req.headers['x-request-id'];
  const requestId = typeof header === 'string' && header.length <= 200 ? header : req.id;
  const bySession = deps.session !== undefined && usesSessionCookie(req.headers) ? await deps.session.authenticate(req.raw, isMutatingMethod(req.method)) : undefined;
  const result =
    bySession === undefined
      ? deps.authenticator.authenticate(req.headers.authorization, clientAddressOf(req.raw))
      : bySession instanceof HerdError
        ? bySession
        : { key: bySession.key };
  if (result instanceof HerdError) {
    deps.audit?.record(
      { action: 'admin.sign_in_failed', object: 'admin', after: { code: result.code } },
      { actor: { id: 'anonymous', name: 'anonymous', role: 'client' }, requestId, sourceIp },
    );
    throw result;
  }
  const ctx: ChangeContext = {
    actor: actorOfKey(result.key),
    requestId,
    sourceIp,
    ...(bySession === undefined || bySession instanceof HerdError ? {} : { sessionId: bySession.session.handle }),
  };
  // A client key signs in but may do nothing here: counted apart, so the log shows who probed the API.
  deps.audit?.record({ action: result.key.role === 'client' ? 'admin.sign_in_denied' : 'admin.sign_in', object: 'admin' }, ctx);
  return ctx;
}

function readIdempotencyKey(req: FastifyRequest, spec: AdminRouteSpec): string | undefined {
  if (spec.idempotency === 'none') return undefined;
  const value = req.headers['idempotency-key'];
  if (value === undefined) {
    if (spec.idempotency === 'required') {
      throw new HerdError(
        'INVALID_ARG',
        `${spec.method} ${spec.path.replace(':ref', '{ref}')} needs an Idempotency-Key header (any unique string, e.g. a UUID): a retry with the same key then cannot act twice.`,
        {
          param: 'Idempotency-Key',
        },
      );
    }
    return undefined;
  }
  if (typeof value !== 'string' || value.trim() === '' || value.length > 255) {
    throw new HerdError('INVALID_ARG', 'the Idempotency-Key header must be one non-empty value of at most 255 characters', { param: 'Idempotency-Key' });
  }
  return value.trim();
}

/** What makes two calls the same call: method, path and body (keys sorted), hashed. */
function fingerprintOf(req: FastifyRequest, body: unknown): string {
  const path = req.url.split('?')[0] ?? req.url;
  return createHash('sha256')
    .update(`${req.method} ${path}\n${canonicalJson(body ?? null)}`)
    .digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function validatePart(schema: z.ZodType, part: string, data: unknown): { value: unknown } | { error: HerdError } {
  let value: unknown = data ?? undefined;
  try {
    if (part === 'body' && Buffer.isBuffer(value)) value = value.length === 0 ? undefined : parseJsonBody(value);
  } catch (err) {
    return { error: toHerdError(err) };
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : undefined;
  const label = part === 'querystring' ? 'query parameter' : part === 'params' ? 'path parameter' : 'body field';
  const message = where === undefined ? `the request ${part === 'body' ? 'body' : part}: ${issue?.message ?? 'invalid'}` : `${label} '${where}': ${issue?.message ?? 'invalid'}`;
  return { error: new HerdError('INVALID_ARG', `Invalid ${message}.`, where === undefined ? {} : { param: where }) };
}

function send(req: FastifyRequest, reply: FastifyReply, answer: AdminAnswer): FastifyReply {
  if (answer.takeOver) {
    reply.hijack();
    answer.takeOver(req.raw, reply.raw);
    return reply;
  }
  if (answer.headers) reply.headers(answer.headers);
  if (answer.contentType !== undefined) return reply.code(answer.status).header('content-type', answer.contentType).send(answer.body);
  return reply.code(answer.status).header('content-type', 'application/json').send(JSON.stringify(answer.body));
}
