// What the console is built from (create-http-app.ts's `console` option): server.ui, the static root, the
// session authentication and audit, and the server facts SessionJson reports.
import type { UiConfig } from '../../config/ui-config-schema.ts';
import type { AuditAggregator } from '../../gateway/admin/audit-aggregator.ts';
import type { ConsoleSessionAuth } from './session-auth.ts';

export interface ServerInfoJson {
  version: string;
  /** The ledger's settlement currency; null with billing.ledger: off or no gateway. */
  currency: string | null;
  gateway: boolean;
  serving: boolean;
  model_control_mode: 'none' | 'poll' | 'explicit';
}

export interface ConsoleOptions {
  ui: Pick<UiConfig, 'base_path' | 'session_ttl_secs' | 'sign_in_failures'>;
  /** Where index.html and assets/ are (default: the package's dist/ui); tests point it at a fixture. */
  staticRoot?: string | undefined;
  /** Sign-in needs the gateway's key store; absent (a serving-only Herd): the page loads, sign-in answers 503. */
  auth?: ConsoleSessionAuth | undefined;
  /** Where sign-ins, failed sign-ins and sign-outs are counted. */
  audit?: Pick<AuditAggregator, 'record'> | undefined;
  /** The `server` part of SessionJson. */
  server: () => ServerInfoJson;
  /** Wall clock, epoch ms (tests pin it). */
  now?: () => number;
}
