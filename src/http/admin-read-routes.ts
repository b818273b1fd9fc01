// /admin/v1/teams (the team CRUD), /usage, /audit, /audit/verify and the read-only catalogue
// (/models, /routes): thin calls into the AdminService, which checks the caller's role.
import { parseTeamFields, parseTeamPatch } from '../gateway/admin/parse-admin-input.ts';
import { parseSince, parseUsageGroup } from '../gateway/billing/usage-report.ts';
import { parseListLimit } from './admin-key-routes.ts';
import { type AdminRouteSpec, answer, defineAdminRoute } from './admin-route-spec.ts';
import {
  auditListQuery,
  auditPage,
  createTeamBody,
  modelsJson,
  refParams,
  routesJson,
  teamJson,
  teamListQuery,
  teamPage,
  updateTeamBody,
  usageJson,
  usageQuery,
  verifyJson,
} from './admin-schemas.ts';

const TEAMS = '/admin/v1/teams';
const TEAM = `${TEAMS}/:ref`;

export const ADMIN_TEAM_ROUTES: readonly AdminRouteSpec[] = [
  defineAdminRoute({
    method: 'GET',
    path: TEAMS,
    operationId: 'listTeams',
    summary: 'List teams (a manager: its own); cursor pagination',
    query: teamListQuery,
    response: teamPage,
    handle: async ({ ctx, service, query }) => answer(200, await service.listTeams(ctx, { search: query.search, limit: parseListLimit(query.limit), cursor: query.cursor })),
  }),
  defineAdminRoute({
    method: 'POST',
    path: TEAMS,
    operationId: 'createTeam',
    summary: 'Create a team',
    idempotency: 'required',
    body: createTeamBody,
    status: 201,
    response: teamJson,
    handle: async ({ ctx, service, body }) => answer(201, await service.createTeam(ctx, parseTeamFields(body))),
  }),
  defineAdminRoute({
    method: 'GET',
    path: TEAM,
    operationId: 'getTeam',
    summary: 'One team by id or name',
    params: refParams,
    response: teamJson,
    handle: async ({ ctx, service, params }) => answer(200, await service.getTeam(ctx, params.ref)),
  }),
  defineAdminRoute({
    method: 'PATCH',
    path: TEAM,
    operationId: 'updateTeam',
    summary: "Change a team's name, models, budgets or limits: only the fields sent; null clears",
    params: refParams,
    body: updateTeamBody,
    response: teamJson,
    handle: async ({ ctx, service, params, body }) => answer(200, await service.updateTeam(ctx, params.ref, parseTeamPatch(body))),
  }),
  defineAdminRoute({
    method: 'DELETE',
    path: TEAM,
    operationId: 'deleteTeam',
    summary: 'Delete a team (refused while it has keys that are not revoked)',
    params: refParams,
    response: teamJson,
    handle: async ({ ctx, service, params }) => answer(200, await service.deleteTeam(ctx, params.ref)),
  }),
];

export const ADMIN_READ_ROUTES: readonly AdminRouteSpec[] = [
  defineAdminRoute({
    method: 'GET',
    path: '/admin/v1/usage',
    operationId: 'getUsage',
    summary: 'Spend and tokens by day, model, provider, key or team (the JSON of herd usage --json)',
    query: usageQuery,
    response: usageJson,
    handle: async ({ ctx, service, query, now }) => {
      const sinceMs = parseSince(query.since ?? '7d', now);
      const untilMs = query.until === undefined ? now : parseSince(query.until, now);
      return answer(200, await service.usage(ctx, { sinceMs, untilMs, by: parseUsageGroup(query.by) }));
    },
  }),
  defineAdminRoute({
    method: 'GET',
    path: '/admin/v1/audit',
    operationId: 'listAudit',
    summary: 'Audit events, newest first, by action, object, actor and time; cursor pagination',
    query: auditListQuery,
    response: auditPage,
    handle: async ({ ctx, service, query, now }) =>
      answer(
        200,
        await service.listAudit(ctx, {
          action: query.action,
          object: query.object,
          actorId: query.actor,
          sinceMs: query.since === undefined ? undefined : parseSince(query.since, now),
          untilMs: query.until === undefined ? undefined : parseSince(query.until, now),
          limit: parseListLimit(query.limit),
          cursor: query.cursor,
        }),
      ),
  }),
  defineAdminRoute({
    method: 'GET',
    path: '/admin/v1/audit/verify',
    operationId: 'verifyAudit',
    summary: "Walk the audit log's hash chain; names the first row that does not match",
    response: verifyJson,
    handle: async ({ ctx, service }) => answer(200, await service.verifyAudit(ctx)),
  }),
  defineAdminRoute({
    method: 'GET',
    path: '/admin/v1/models',
    operationId: 'listModels',
    summary: 'Every model the gateway routes (as GET /v1/models, for all keys)',
    response: modelsJson,
    handle: async ({ ctx, service }) => answer(200, await service.models(ctx)),
  }),
  defineAdminRoute({
    method: 'GET',
    path: '/admin/v1/routes',
    operationId: 'listRoutes',
    summary: "The routing table from herd.yaml, read-only: models' deployments, tiers, patterns",
    response: routesJson,
    handle: async ({ ctx, service }) => answer(200, await service.routes(ctx)),
  }),
];
