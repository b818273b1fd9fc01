// GET /admin/usage, kept from before the /admin/v1 API (the master key or an admin key): the ledger's
// usage report, the JSON of `herd usage --json`; and the admin API's one error answer (OpenAI's shape).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HerdError } from '../core/errors.ts';
import type { Ledger } from '../gateway/billing/ledger.ts';
import { buildUsageReport, convertUsageReportToJson, parseSince, parseUsageGroup } from '../gateway/billing/usage-report.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';
import { clientAddressOf } from './resolve-client-address.ts';

interface LegacyUsageDeps {
  authenticator: Pick<Authenticator, 'authenticate'>;
  ledger: Pick<Ledger, 'usage'>;
  masterKeyEnv?: string;
  now?: () => number;
}

interface UsageQueryString {
  since?: string;
  until?: string;
  by?: string;
}

export function registerLegacyUsageRoute(scope: FastifyInstance, deps: LegacyUsageDeps, allow: (url: string, methods: string[]) => void): void {
  scope.get<{ Querystring: UsageQueryString }>('/admin/usage', async (req, reply) => {
    requireAdmin(deps, req);
    const now = (deps.now ?? Date.now)();
    const by = parseUsageGroup(req.query.by);
    const sinceMs = parseSince(req.query.since ?? '7d', now);
    const untilMs = req.query.until === undefined ? now : parseSince(req.query.until, now);
    if (untilMs <= sinceMs) throw new HerdError('INVALID_ARG', 'until must be after since', { param: 'until' });
    const report = await buildUsageReport(deps.ledger, { sinceMs, untilMs, by });
    return reply
      .code(200)
      .header('content-type', 'application/json')
      .send(JSON.stringify(convertUsageReportToJson(report)));
  });
  allow('/admin/usage', ['GET', 'HEAD']);
}

function requireAdmin(deps: LegacyUsageDeps, req: FastifyRequest): void {
  const result = deps.authenticator.authenticate(req.headers.authorization, clientAddressOf(req.raw));
  if (result instanceof HerdError) throw result;
  if (result.key.role !== 'admin') {
    throw new HerdError(
      'PERMISSION_DENIED',
      `${req.method} ${req.url.split('?')[0]} needs the admin key: use the value of $${deps.masterKeyEnv ?? 'HERD_MASTER_KEY'} as the Bearer token. The key '${result.key.name}' is not an admin key.`,
      { reason: 'admin_only' },
    );
  }
}

/**
 * OpenAI's error shape, as on /v1, with two refinements for a REST API of things: a conflict
 * (ALREADY_EXISTS: a name taken, an Idempotency-Key reused with another body) is 409, and a thing not
 * found is `not_found` rather than OpenAI's `model_not_found`.
 */
export function sendAdminError(reply: FastifyReply, error: HerdError): void {
  const answer = mapErrorToOpenAI(error);
  if (error.code === 'ALREADY_EXISTS') {
    answer.status = 409;
    answer.body.error.code = 'conflict';
  } else if (error.code === 'NOT_FOUND') answer.body.error.code = 'not_found';
  void reply.code(answer.status).headers(answer.headers).header('content-type', 'application/json').send(JSON.stringify(answer.body));
}
