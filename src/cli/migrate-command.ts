// `herd migrate`: applies the ledger's, the batch store's and the key store's schema migrations where herd.yaml puts them
// (SQLite or PostgreSQL) and exits, so a deployment migrates once before its replicas start. A database
// newer than this build is refused: Herd never migrates backwards.
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { isBatchEnabled } from '../config/batch-config-schema.ts';
import { defaultHerdConfig, loadHerdConfigFile } from '../config/load-herd-config.ts';
import { BATCH_STORE_SCOPE, batchStoreMigrations, postgresBatchStoreMigrations } from '../gateway/batch/batch-store-migrations.ts';
import { ledgerMigrations, LEDGER_SCOPE } from '../gateway/billing/ledger-migrations.ts';
import { parseLedgerLocation } from '../gateway/billing/open-ledger.ts';
import { KEY_STORE_SCOPE, keyStoreMigrations, postgresKeyStoreMigrations } from '../gateway/keys/key-store-migrations.ts';
import { parseKeyStoreLocation } from '../gateway/keys/open-key-store.ts';
import { type MigrateStoreInput, type MigrationReport, migrateStore } from '../gateway/storage/migrate-store.ts';

export interface MigrateFlags {
  config?: string;
}

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description("apply the ledger's, the batch store's and the key store's schema migrations (SQLite or PostgreSQL, as herd.yaml says) and exit")
    .option('--config <file>', 'herd.yaml (default: ./herd.yaml when present, else built-in defaults)')
    .action(async (flags: MigrateFlags) => {
      await runMigrate(flags, (line) => process.stdout.write(`${line}\n`));
    });
}

/** The stores herd.yaml names, migrated in order (the ledger, then the key store); one line each. */
export async function runMigrate(flags: MigrateFlags, say: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<MigrationReport[]> {
  const file = flags.config ?? (existsSync('herd.yaml') ? 'herd.yaml' : undefined);
  const config = file ? loadHerdConfigFile(file, env).config : defaultHerdConfig();
  const steps: MigrateStoreInput[] = [];
  if (config.billing.ledger !== 'off') {
    const ledger = parseLedgerLocation(config.billing.ledger);
    steps.push({ location: ledger, scope: LEDGER_SCOPE, migrations: ledgerMigrations, param: 'billing.ledger' });
    // The batch store's tables live in the ledger's database, under their own scope.
    if (isBatchEnabled(config)) {
      const migrations = ledger.kind === 'sqlite' ? batchStoreMigrations : postgresBatchStoreMigrations;
      steps.push({ location: ledger, scope: BATCH_STORE_SCOPE, migrations, param: 'billing.ledger' });
    }
  } else {
    say('ledger: off (billing.ledger), nothing to migrate');
  }
  const keys = parseKeyStoreLocation(config.auth.db ?? '');
  steps.push({ location: keys, scope: KEY_STORE_SCOPE, migrations: keys.kind === 'sqlite' ? keyStoreMigrations : postgresKeyStoreMigrations, param: 'auth.db' });
  const reports: MigrationReport[] = [];
  for (const step of steps) {
    const report = await migrateStore(step);
    reports.push(report);
    say(describeReport(report));
  }
  return reports;
}

export function describeReport(report: MigrationReport): string {
  const label = report.scope === KEY_STORE_SCOPE ? 'key store' : report.scope === BATCH_STORE_SCOPE ? 'batch store' : report.scope;
  if (report.applied.length === 0) return `${label} at ${report.where}: schema v${report.to}, up to date`;
  const applied = report.applied.map((m) => `v${m.version} (${m.name})`).join('; ');
  return `${label} at ${report.where}: schema v${report.from} -> v${report.to}, applied ${applied}`;
}
