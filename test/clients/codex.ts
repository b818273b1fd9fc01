// Codex (`codex exec --json`) against Herd's Responses endpoint: a fresh CODEX_HOME whose config.toml names Herd
// as the model provider (wire_api "responses", the key from an env var), the refusing proxy in front of the rest.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CODEX_JS } from './installed-clients.ts';
import { baseEnv, runClient, type ClientRun } from './run-client.ts';

export interface CodexOptions {
  /** Herd's OpenAI base, ending in /v1. */
  baseUrl: string;
  apiKey: string;
  prompt: string;
  proxyUrl: string;
  /** The folder it works in; its CODEX_HOME and HOME are made there. */
  cwd: string;
  /** Omitted: Codex's default model. */
  model?: string;
  timeoutMs?: number;
}

export interface CodexResult extends ClientRun {
  /** The --json lines, parsed. */
  events: Array<Record<string, unknown>>;
}

/** The config.toml docs/clients.md shows, with the base URL filled in. */
export function codexConfigToml(baseUrl: string, options: { retries?: number } = {}): string {
  const retries = options.retries === undefined ? [] : [`request_max_retries = ${options.retries}`, `stream_max_retries = ${options.retries}`];
  return [
    'model_provider = "herd"',
    '',
    '[model_providers.herd]',
    'name = "Herd"',
    `base_url = ${JSON.stringify(baseUrl)}`,
    'wire_api = "responses"',
    'env_key = "HERD_API_KEY"',
    ...retries,
    '',
  ].join('\n');
}

export async function runCodex(options: CodexOptions): Promise<CodexResult> {
  const home = mkdtempSync(join(options.cwd, 'home-'));
  const codexHome = join(home, '.codex');
  mkdirSync(codexHome);
  // No retries: a refused request fails the run at once instead of after Codex's backoff.
  writeFileSync(join(codexHome, 'config.toml'), codexConfigToml(options.baseUrl, { retries: 0 }));
  const env = {
    ...baseEnv(home, options.proxyUrl),
    CODEX_HOME: codexHome,
    HERD_API_KEY: options.apiKey,
    TMPDIR: mkdtempSync(join(home, 'tmp-')),
  };
  const args = [CODEX_JS, 'exec', '--json', '--skip-git-repo-check', '--ephemeral', '--sandbox', 'read-only', '-C', options.cwd];
  if (options.model) args.push('--model', options.model);
  args.push(options.prompt);
  const run = await runClient(process.execPath, args, { cwd: options.cwd, env, timeoutMs: options.timeoutMs ?? 60_000 });
  const events: Array<Record<string, unknown>> = [];
  for (const line of run.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      events.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line cut by a kill: the run's code says what happened
    }
  }
  return { ...run, events };
}
