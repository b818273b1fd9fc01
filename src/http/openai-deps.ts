// What the OpenAI and Anthropic routes and the exchanges' table are built from: its own module so
// those route files need not import each other for it.
import type { ChatGateway } from '../gateway/flow/chat-gateway.ts';
import type { LedgerHealth } from '../gateway/flow/describe-gateway.ts';
import type { EmbeddingsGateway } from '../gateway/flow/embeddings-gateway.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import type { RecordRefusal } from '../gateway/flow/refusals.ts';
import type { ConsoleSessionAuth } from './console/session-auth.ts';
import type { InFlightCount } from './gateway-exchange.ts';
import type { Tracer } from '../tracing/index.ts';

export interface OpenAIDeps {
  /** The request flow (limits, cache, budget, routing, billing), model listing and health. */
  gateway: ChatGateway;
  authenticator: Authenticator;
  /** /health's ledger section (absent with billing.ledger: off). */
  ledgerHealth?: () => LedgerHealth;
  /** POST /v1/embeddings; absent: the route is not registered. */
  embeddings?: EmbeddingsGateway;
  log?: (line: string) => void;
  /** Where refusals (key, model access, limits, budget) go: the audit log, a minute's repeats folded into one row. */
  recordRefusal?: RecordRefusal;
  /** Gateway exchanges running now, for the in-flight gauge. */
  inFlight?: InFlightCount;
  /** The console's session cookie on /v1 (the playground), when the console is served. */
  session?: ConsoleSessionAuth;
  /** Spans for each exchange (the no-op tracer when tracing is off). */
  tracer?: Tracer;
}
