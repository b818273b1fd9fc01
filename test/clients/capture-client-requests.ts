// Records what each real client sends (method, path, headers without secrets, JSON body) by running it once
// against a local upstream that plays the model; writes test/fixtures/clients/<client>/<case>-<n>.json.
// Run after `npm ci --prefix test/clients`: npx tsx test/clients/capture-client-requests.ts
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startMockUpstream, type MockUpstream, type RecordedRequest } from '../gateway/helpers/mock-upstream.ts';
import { toolLoopHandler } from '../gateway/helpers/tool-loop-upstream.ts';
import { runClaudeCode } from './claude-code.ts';
import { CLAUDE_PROMPT, CODEX_PROMPT, finalText, toolCalls, writeNote } from './client-cases.ts';
import { runCodex } from './codex.ts';
import { CLIENTS_DIR, clientsMissing, DRIVERS_DIR } from './installed-clients.ts';
import { startRefusingProxy } from './refusing-proxy.ts';
import { baseEnv, runClient, type ClientRun } from './run-client.ts';

const FIXTURES = resolve(CLIENTS_DIR, '../fixtures/clients');
/** The working folder as the fixtures show it: the real one is a fresh temp folder each run. */
const STABLE_DIR = '/tmp/herd-client-capture';
const SECRET_HEADERS = new Set(['authorization', 'x-api-key']);
const FAKE_KEY = 'sk-herd-capture-fake-key';

interface Case {
  client: 'claude-code' | 'codex' | 'ai-sdk' | 'langchain';
  name: string;
  run: (ctx: { upstream: MockUpstream; proxyUrl: string; dir: string }) => Promise<ClientRun>;
}

const version = (pkg: string) => (JSON.parse(readFileSync(join(CLIENTS_DIR, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

const claude = (name: string, model?: string): Case => ({
  client: 'claude-code',
  name,
  run: ({ upstream, proxyUrl, dir }) => runClaudeCode({ baseUrl: upstream.url, apiKey: FAKE_KEY, prompt: CLAUDE_PROMPT, proxyUrl, cwd: dir, model }),
});
const codex = (name: string, model?: string): Case => ({
  client: 'codex',
  name,
  run: ({ upstream, proxyUrl, dir }) => runCodex({ baseUrl: `${upstream.url}/v1`, apiKey: FAKE_KEY, prompt: CODEX_PROMPT, proxyUrl, cwd: dir, model }),
});
const driver = (client: 'ai-sdk' | 'langchain', spec: string): Case => ({
  client,
  name: spec.replaceAll(':', '-'),
  run: ({ upstream, proxyUrl, dir }) =>
    runClient(process.execPath, [join(DRIVERS_DIR, `${client}.mjs`), spec], {
      cwd: dir,
      env: { ...baseEnv(dir, proxyUrl), HERD_BASE_URL: `${upstream.url}/v1`, HERD_API_KEY: FAKE_KEY },
      timeoutMs: 30_000,
    }),
});

const CASES: Case[] = [
  claude('default-model'),
  claude('alias-haiku', 'haiku'),
  claude('model-gpt-4.1', 'gpt-4.1'),
  codex('default-model'),
  codex('model-gpt-5-codex', 'gpt-5-codex'),
  ...['generate', 'stream', 'tools'].flatMap((kind) => ['responses:gpt-5-codex', 'chat:gpt-4.1', 'messages:claude-sonnet-4-5'].map((api) => driver('ai-sdk', `${kind}:${api}`))),
  ...['invoke', 'stream', 'tools'].flatMap((kind) => ['chat:gpt-4.1', 'responses:gpt-5-codex'].map((api) => driver('langchain', `${kind}:${api}`))),
];

function fixture(client: string, request: RecordedRequest, dir: string): unknown {
  const headers = Object.fromEntries(
    Object.entries(request.headers)
      .filter(([name]) => name !== 'host' && name !== 'content-length')
      .map(([name, value]) => [name, SECRET_HEADERS.has(name) ? '<redacted>' : value]),
  );
  const text = JSON.stringify({ client, method: request.method, path: request.url, headers, body: request.body }, null, 2);
  // Claude Code also names the folder as a project slug (slashes as dashes).
  return JSON.parse(text.split(dir).join(STABLE_DIR).split(dir.replaceAll('/', '-')).join(STABLE_DIR.replaceAll('/', '-')));
}

async function main(): Promise<void> {
  const missing = clientsMissing();
  if (missing) throw new Error(missing);
  const proxy = await startRefusingProxy();
  const versions: Record<string, string> = {
    'claude-code': `@anthropic-ai/claude-code ${version('@anthropic-ai/claude-code')}`,
    codex: `@openai/codex ${version('@openai/codex')}`,
    'ai-sdk': `ai ${version('ai')}, @ai-sdk/openai ${version('@ai-sdk/openai')}, @ai-sdk/anthropic ${version('@ai-sdk/anthropic')}`,
    langchain: `@langchain/openai ${version('@langchain/openai')}`,
  };
  try {
    for (const entry of CASES) {
      const dir = mkdtempSync(join(tmpdir(), 'herd-capture-'));
      writeNote(dir);
      const upstream = await startMockUpstream(toolLoopHandler({ calls: toolCalls(dir), finalText }));
      try {
        const run = await entry.run({ upstream, proxyUrl: proxy.url, dir });
        if (run.code !== 0 || run.timedOut) throw new Error(`${entry.client} ${entry.name}: exit ${run.code}${run.timedOut ? ' (timed out)' : ''}\n${run.stderr}`);
        const out = join(FIXTURES, entry.client);
        mkdirSync(out, { recursive: true });
        upstream.requests.forEach((request, i) => {
          const file = join(out, `${entry.name}-${i + 1}.json`);
          writeFileSync(file, `${JSON.stringify({ captured_from: versions[entry.client], ...(fixture(entry.client, request, dir) as object) }, null, 2)}\n`);
          process.stdout.write(`${file}\n`);
        });
      } finally {
        await upstream.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }
    process.stdout.write(`the proxy refused: ${[...new Set(proxy.attempts)].join(', ') || 'nothing'}\n`);
  } finally {
    await proxy.close();
  }
}

await main();
