// Claude Code in print mode (`claude -p … --output-format stream-json --verbose`) against a base URL, with a
// fresh HOME, telemetry and updates off, and the refusing proxy in front of everything but loopback.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { CLAUDE_CODE_BIN } from './installed-clients.ts';
import { baseEnv, runClient, type ClientRun } from './run-client.ts';

export interface ClaudeCodeOptions {
  baseUrl: string;
  apiKey: string;
  prompt: string;
  proxyUrl: string;
  /** The folder it works in (its Read tool reads there); also where its HOME is made. */
  cwd: string;
  /** Omitted: Claude Code's default model. */
  model?: string;
  timeoutMs?: number;
}

export interface ClaudeCodeResult extends ClientRun {
  /** The stream-json lines, parsed. */
  events: Array<Record<string, unknown>>;
}

export async function runClaudeCode(options: ClaudeCodeOptions): Promise<ClaudeCodeResult> {
  const home = mkdtempSync(join(options.cwd, 'home-'));
  const env = {
    ...baseEnv(home, options.proxyUrl),
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: options.apiKey,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    TMPDIR: mkdtempSync(join(home, 'tmp-')),
  };
  // Read is the one tool allowed: the upstream's tool call reads a file the test made, nothing is written or run.
  const args = ['-p', options.prompt, '--output-format', 'stream-json', '--verbose', '--allowedTools', 'Read'];
  if (options.model) args.push('--model', options.model);
  const run = await runClient(CLAUDE_CODE_BIN, args, { cwd: options.cwd, env, timeoutMs: options.timeoutMs ?? 60_000 });
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
