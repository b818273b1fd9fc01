// The admin API's OpenAPI 3.1 document, generated from the same route table and zod schemas the routes
// are registered and validated with (GET /admin/v1/openapi.json); test/http/admin-openapi.test.ts
// checks it against the routes the server really has.
import { z } from 'zod';
import { HERD_VERSION } from '../core/herd-version.ts';
import type { AdminRouteSpec } from './admin-route-spec.ts';
import { errorJson } from './admin-schemas.ts';

type JsonSchema = Record<string, unknown>;

/** A zod schema as a JSON Schema (2020-12, which OpenAPI 3.1 uses), without the $schema line. */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** `/admin/v1/keys/:ref` → `/admin/v1/keys/{ref}`. */
export function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, '{$1}');
}

function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (schema === undefined) return [];
  const json = toJsonSchema(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: where, required: where === 'path' || required.has(name), schema: rest, ...(description !== undefined ? { description } : {}) };
  });
}

function operationOf(spec: AdminRouteSpec): JsonSchema {
  const parameters = [...parametersOf(spec.params, 'path'), ...parametersOf(spec.query, 'query')];
  if (spec.idempotency !== 'none') {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: spec.idempotency === 'required',
      description: 'A retry with the same key and body gets the first answer (Idempotent-Replayed: true); another body with the same key is 409',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  }
  const error = { description: "An error, in OpenAI's shape", content: { 'application/json': { schema: toJsonSchema(errorJson, 'output') } } };
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.auth ? {} : { security: [] }),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body !== undefined
      ? { requestBody: { required: !(spec.body instanceof z.ZodOptional), content: { 'application/json': { schema: toJsonSchema(spec.body, 'input') } } } }
      : {}),
    responses: {
      [String(spec.status)]: { description: spec.summary, content: { [spec.contentType ?? 'application/json']: { schema: toJsonSchema(spec.response, 'output') } } },
      default: error,
    },
  };
}

export function buildAdminOpenApi(specs: readonly AdminRouteSpec[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const spec of specs) {
    const path = toOpenApiPath(spec.path);
    paths[path] ??= {};
    (paths[path] as Record<string, JsonSchema>)[spec.method.toLowerCase()] = operationOf(spec);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Herd admin API',
      version: HERD_VERSION,
      description: "Keys, teams, usage, the audit log and the routing catalogue. Roles: admin, viewer (read-only), manager (its own team's keys). docs/keys-and-teams.md.",
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'the master key ($HERD_MASTER_KEY) or a key with an admin, viewer or manager role' } },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
