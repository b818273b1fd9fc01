// A SQLite key store and ledger in a temporary folder, the AdminService over them, and a Fastify app
// with the admin API and GET /v1/me: what the admin and /v1/me tests share. The authenticator is a
// small stand-in over store.lookup (the master key is admin), as the routes only call authenticate().
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { HerdError } from '../../src/core/errors.ts';
import { AdminService } from '../../src/gateway/admin/admin-service.ts';
import { AuditAggregator } from '../../src/gateway/admin/audit-aggregator.ts';
import { describeRoutes } from '../../src/gateway/admin/describe-routes.ts';
import { planBudgets } from '../../src/gateway/billing/plan-budgets.ts';
import { SqliteLedger } from '../../src/gateway/billing/sqlite-ledger.ts';
import { parseBearerToken } from '../../src/gateway/keys/authenticator.ts';
import type { KeyInfo, KeyStore } from '../../src/gateway/keys/key-store.ts';
import { openKeyStore } from '../../src/gateway/keys/open-key-store.ts';
import { buildGatewayCatalog } from '../../src/gateway/router/gateway-catalog.ts';
import { createSyntheticKey } from '../../src/gateway/keys/synthetic-key.ts';
import { registerAdminRoutes } from '../../src/http/admin-routes.ts';
import { registerMeRoute } from '../../src/http/me-route.ts';
import { gatewayConfig } from '../gateway/helpers/gateway-fixtures.ts';

export const MASTER = 'master-secret-for-tests-0123456789';

export const MASTER_KEY: KeyInfo = createSyntheticKey({ id: 'master', name: 'master ($HERD_MASTER_KEY)', role: 'admin' });

/** What the routes need of the Authenticator: a key for a good Bearer token, UNAUTHENTICATED otherwise. */
export function createTestAuthenticator(store: KeyStore) {
  return {
    authenticate(header: string | undefined): { key: KeyInfo } | HerdError {
      const token = parseBearerToken(header);
      if (token === undefined) return new HerdError('UNAUTHENTICATED', 'no key');
      if (token === MASTER) return { key: MASTER_KEY };
      const found = store.lookup(token);
      if (found.state === 'active' || found.state === 'grace') return { key: found.key };
      return new HerdError('UNAUTHENTICATED', `Incorrect API key provided (${found.state}).`, { reason: 'invalid_api_key' });
    },
  };
}

export interface AdminSetup {
  app: FastifyInstance;
  store: KeyStore;
  ledger: SqliteLedger;
  service: AdminService;
  audit: AuditAggregator;
  registered: string[];
  close(): Promise<void>;
}

/** `keyStore`: a postgres:// URL to run on PostgreSQL instead of a SQLite file. */
export async function setupAdmin(options: { now?: () => number; listen?: boolean; keyStore?: string } = {}): Promise<AdminSetup> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-admin-api-'));
  const now = options.now ?? Date.now;
  const store = await openKeyStore(options.keyStore ?? join(dir, 'keys.db'), { now });
  const ledger = SqliteLedger.open(join(dir, 'ledger.db'));
  const catalog = buildGatewayCatalog(
    gatewayConfig(`
providers:
  openai: { type: openai, api_key_env: TEST_OPENAI_KEY }
models:
  gpt-4o:
    aliases: ['4o']
    price: { input: 2.5, output: 10 }
    deployments: [{ provider: openai, upstream_model: gpt-4o-2024 }]
`),
    { TEST_OPENAI_KEY: 'x' },
  );
  const service = new AdminService({
    store,
    ledger,
    planBudgets,
    currency: 'CNY',
    now,
    catalog: {
      listModels: async () => [{ id: 'gpt-4o', object: 'model', created: 0, owned_by: 'openai', herd: { kind: 'model', providers: ['openai'], aliases: ['4o'] } }],
      routes: () => describeRoutes(catalog),
    },
  });
  const audit = new AuditAggregator({ store, now, timer: false });
  const authenticator = createTestAuthenticator(store);
  const app = Fastify();
  // As the real app does: every body arrives as bytes.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const registered: string[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) registered.push(`${method} ${route.url}`);
  });
  const allow = () => undefined;
  registerAdminRoutes(app, { authenticator, service, audit, ledger, masterKeyEnv: 'HERD_MASTER_KEY', now }, allow);
  registerMeRoute(app, { authenticator, service }, allow);
  if (options.listen) await app.listen({ host: '127.0.0.1', port: 0 });
  else await app.ready();
  return {
    app,
    store,
    ledger,
    service,
    audit,
    registered,
    async close() {
      await app.close();
      await audit.close();
      await ledger.close();
      await store.close();
    },
  };
}

export const asMaster = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${MASTER}`, ...extra });
export const bearer = (secret: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${secret}`, ...extra });
