// /admin/v1/keys: list, create (the secret in the answer, once), read, update, revoke, rotate, block and
// unblock; each a thin call into the AdminService, which checks the caller's role.
import { parseGraceMs, parseKeyFields, parseKeyPatch } from '../gateway/admin/parse-admin-input.ts';
import {
  createdKeyJson,
  createKeyBody,
  emptyBody,
  keyJson,
  keyListQuery,
  keyPage,
  refParams,
  revokedKeyJson,
  rotatedKeyJson,
  rotateKeyBody,
  updateKeyBody,
} from './admin-schemas.ts';
import { type AdminRouteSpec, answer, defineAdminRoute } from './admin-route-spec.ts';

const KEYS = '/admin/v1/keys';
const KEY = `${KEYS}/:ref`;

export function parseListLimit(text: string | undefined): number | undefined {
  return text === undefined ? undefined : Math.min(500, Math.max(1, Number(text)));
}

export const ADMIN_KEY_ROUTES: readonly AdminRouteSpec[] = [
  defineAdminRoute({
    method: 'GET',
    path: KEYS,
    operationId: 'listKeys',
    summary: "List keys (a manager: its team's), with this period's spend; cursor pagination",
    query: keyListQuery,
    response: keyPage,
    handle: async ({ ctx, service, query }) =>
      answer(
        200,
        await service.listKeys(ctx, {
          team: query.team,
          search: query.search,
          includeRevoked: query.include_revoked === 'true',
          limit: parseListLimit(query.limit),
          cursor: query.cursor,
        }),
      ),
  }),
  defineAdminRoute({
    method: 'POST',
    path: KEYS,
    operationId: 'createKey',
    summary: 'Create a key; the answer carries its secret, the only time it is shown',
    idempotency: 'required',
    body: createKeyBody,
    status: 201,
    response: createdKeyJson,
    handle: async ({ ctx, service, body, now }) => {
      const created = await service.createKey(ctx, parseKeyFields(body, now));
      // The store keeps this answer sealed under the Idempotency-Key (seal-replay.ts): a lost answer is recovered by retrying.
      return answer(201, { key: created.key, secret: created.secret });
    },
  }),
  defineAdminRoute({
    method: 'GET',
    path: KEY,
    operationId: 'getKey',
    summary: 'One key by public id, name (team/name) or prefix',
    params: refParams,
    response: keyJson,
    handle: async ({ ctx, service, params }) => answer(200, await service.getKey(ctx, params.ref)),
  }),
  defineAdminRoute({
    method: 'PATCH',
    path: KEY,
    operationId: 'updateKey',
    summary: 'Change a key: only the fields sent; null clears a limit, the expiry or the team',
    params: refParams,
    body: updateKeyBody,
    response: keyJson,
    handle: async ({ ctx, service, params, body, now }) => answer(200, await service.updateKey(ctx, params.ref, parseKeyPatch(body, now))),
  }),
  defineAdminRoute({
    method: 'DELETE',
    path: KEY,
    operationId: 'revokeKey',
    summary: 'Revoke a key (idempotent: revoking a revoked key says so)',
    params: refParams,
    response: revokedKeyJson,
    handle: async ({ ctx, service, params }) => {
      const result = await service.revokeKey(ctx, params.ref);
      return answer(200, { key: result.key, already_revoked: result.alreadyRevoked });
    },
  }),
  defineAdminRoute({
    method: 'POST',
    path: `${KEY}/rotate`,
    operationId: 'rotateKey',
    summary: 'A new secret for the key; same id, spend and budget windows; the old secret works through the grace',
    idempotency: 'required',
    params: refParams,
    body: rotateKeyBody,
    response: rotatedKeyJson,
    handle: rotate,
  }),
  ...(['block', 'unblock'] as const).map((action) =>
    defineAdminRoute({
      method: 'POST',
      path: `${KEY}/${action}`,
      operationId: `${action}Key`,
      summary: action === 'block' ? 'Refuse the key until unblocked (it keeps its secret and spend)' : 'Accept a blocked key again',
      params: refParams,
      body: emptyBody.optional(),
      response: keyJson,
      handle: async ({ ctx, service, params }) => answer(200, await service.setBlocked(ctx, params.ref, action === 'block')),
    }),
  ),
];

async function rotate({ ctx, service, params, body }: Parameters<AdminRouteSpec['handle']>[0] & { params: { ref: string }; body: { grace?: number | string | undefined; rotation_id?: string | undefined } }) {
  const rotated = await service.rotateKey(ctx, params.ref, { graceMs: parseGraceMs(body.grace), rotationId: body.rotation_id });
  const json = { key: rotated.key, secret: rotated.secret, grace_until: rotated.graceUntil.toISOString(), replayed: rotated.replayed };
  return answer(200, json);
}
