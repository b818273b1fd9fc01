// Where the client suite's packages (test/clients/package.json, `npm ci --prefix test/clients`) put the real
// clients, and why a test must skip when they are not installed.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLIENTS_DIR = dirname(fileURLToPath(import.meta.url));
const MODULES = join(CLIENTS_DIR, 'node_modules');

// Claude Code's npm package is a postinstall shim around a native binary in a per-platform package; the suite
// runs that binary itself, so a denied or skipped postinstall changes nothing.
const CLAUDE_PLATFORM: Record<string, string> = { 'linux-x64': 'claude-code-linux-x64', 'linux-arm64': 'claude-code-linux-arm64' };

export const CLAUDE_CODE_BIN = join(MODULES, '@anthropic-ai', CLAUDE_PLATFORM[`${process.platform}-${process.arch}`] ?? 'claude-code-unsupported', 'claude');
/** Codex's own launcher: it finds the native binary in @openai/codex-<platform> and execs it. */
export const CODEX_JS = join(MODULES, '@openai', 'codex', 'bin', 'codex.js');
export const DRIVERS_DIR = join(CLIENTS_DIR, 'drivers');

/** Why the real-client tests cannot run here, or undefined when they can. */
export function clientsMissing(): string | undefined {
  if (!existsSync(MODULES)) return 'test/clients/node_modules is absent: run `npm ci --prefix test/clients` (.ci/run does)';
  if (!existsSync(CLAUDE_CODE_BIN)) return `no Claude Code binary for ${process.platform}-${process.arch} at ${CLAUDE_CODE_BIN}`;
  if (!existsSync(CODEX_JS)) return 'test/clients/node_modules has no @openai/codex: run `npm ci --prefix test/clients`';
  return undefined;
}
