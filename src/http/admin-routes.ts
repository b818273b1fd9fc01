// Admin routes for the master key only: GET /admin/usage?since=&until=&by= returns the ledger's usage
// report (the JSON of `herd usage --json`); other keys get 403, no key 401, in OpenAI's error shape.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { Ledger } from '../gateway/billing/ledger.ts';
import { buildUsageReport, convertUsageReportToJson, parseSince, parseUsageGroup } from '../gateway/billing/usage-report.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';
import { clientAddressOf } from './resolve-client-address.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';

export interface AdminDeps {
  authenticator: Authenticator;
  /** The ledger the report reads. */
  ledger: Pick<Ledger, 'usage'>;
  /** Named in the 403 message (auth.master_key_env). */
  masterKeyEnv?: string;
  /** Wall clock, epoch ms (tests pin it). */
  now?: () => number;
  log?: (line: string) => void;
}

interface UsageQueryString {
  since?: string;
  until?: string;
  by?: string;
}

export function registerAdminRoutes(app: FastifyInstance, deps: AdminDeps, allow: (url: string, methods: string[]) => void): void {
  void app.register(async (scope) => {
    scope.setErrorHandler((error: Error, _request, reply) => {
      const herd = toHerdError(error);
      if (herd.code === 'INTERNAL') deps.log?.(`admin error: ${formatErrorForLog(error)}`);
      sendError(reply, herd);
    });

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
  });
}

function requireAdmin(deps: AdminDeps, req: FastifyRequest): void {
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

function sendError(reply: FastifyReply, error: HerdError): void {
  const answer = mapErrorToOpenAI(error);
  void reply.code(answer.status).headers(answer.headers).header('content-type', 'application/json').send(JSON.stringify(answer.body));
}
