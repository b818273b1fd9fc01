// Starts this process's budget-alert sender on the ledger's outbox when billing.alerts.webhook_url is
// set, and makes the ledger's close() stop it first (no delivery is cut off by a closed database).
import type { BillingConfig } from '../../config/billing-config-schema.ts';
import { HerdError } from '../../core/errors.ts';
import { AlertSender } from './alert-sender.ts';
import type { Ledger } from './ledger.ts';

export function startAlertSender(ledger: Ledger, billing: BillingConfig, env: NodeJS.ProcessEnv, log: (line: string) => void): AlertSender | undefined {
  const { alerts } = billing;
  if (alerts.webhook_url === undefined || ledger.alertOutbox === undefined) return undefined;
  const secret = alerts.secret_env === undefined ? undefined : env[alerts.secret_env];
  if (alerts.secret_env !== undefined && (secret === undefined || secret === '')) {
    throw new HerdError('INVALID_ARG', `billing.alerts.secret_env names ${alerts.secret_env}, which is not set: set it to the webhook signing secret, or remove secret_env`);
  }
  const sender = new AlertSender({ outbox: ledger.alertOutbox(), config: alerts, secret, currency: billing.currency, log: (line) => log(line) });
  const close = ledger.close.bind(ledger);
  ledger.close = async () => {
    await sender.stop();
    await close();
  };
  sender.start();
  log(`budget alerts: sending to ${new URL(alerts.webhook_url).origin} as ${sender.workerId}`);
  return sender;
}
