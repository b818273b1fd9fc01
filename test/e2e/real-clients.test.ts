// Real clients, unchanged, against Herd on 127.0.0.1: Claude Code (print mode, stream-json), Codex (exec, the
// Responses wire), the AI SDK and LangChain. Local upstreams play the model: a tool call, then text quoting the
// tool's output; each client's requests land in the ledger under its own key. The CLIs reach nothing else (a
// refusing proxy). Needs `npm ci --prefix test/clients` (.ci/run does it); skipped, saying so, without it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runClaudeCode, type ClaudeCodeResult } from '../clients/claude-code.ts';
import { CLAUDE_PROMPT, CODEX_PROMPT, FINAL_PREFIX, NOTE_TEXT } from '../clients/client-cases.ts';
import { runCodex, type CodexResult } from '../clients/codex.ts';
import { clientsMissing, DRIVERS_DIR } from '../clients/installed-clients.ts';
import { baseEnv, runClient } from '../clients/run-client.ts';
import type { MockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { CLAUDE_CODE_DEFAULT_MODEL, CODEX_DEFAULT_MODEL, startRealClientsHerd, type ClientName, type RealClientsHerd } from './real-clients-herd.ts';

const CLI_TIMEOUT_MS = 40_000;

/** What went wrong, for an assertion message: the client's last words and what the upstreams saw. */
function explain(run: { code: number | null; timedOut: boolean; stdout: string; stderr: string }): string {
  return `exit ${run.code}${run.timedOut ? ' (killed at the time bound)' : ''}\nstdout: ${run.stdout.slice(-1500)}\nstderr: ${run.stderr.slice(-1500)}`;
}

const paths = (upstream: MockUpstream, from: number) => upstream.requests.slice(from).map((request) => request.url.split('?')[0]);
const models = (upstream: MockUpstream, from: number) => upstream.requests.slice(from).map((request) => (request.body as { model?: string }).model);

describe('real clients against Herd', { skip: clientsMissing() }, () => {
  let herd: RealClientsHerd;

  before(async () => {
    herd = await startRealClientsHerd();
  });
  after(async () => {
    await herd?.close();
  });

  /** The ledger rows of one client's key for one requested model: all answered, all by the expected provider. */
  async function assertLedger(client: ClientName, modelRequested: string, provider: string, atLeast: number): Promise<void> {
    const rows = await herd.ledgerRows(client, atLeast, modelRequested);
    assert.ok(rows.length >= atLeast, `${client}: ${rows.length} ledger rows for ${modelRequested}, expected ${atLeast}: ${JSON.stringify(rows)}`);
    for (const row of rows) {
      assert.equal(row.status, 'ok', JSON.stringify(row));
      assert.equal(row.provider, provider, JSON.stringify(row));
    }
  }

  describe('Claude Code (stream-json, Messages)', () => {
    async function claude(model?: string): Promise<ClaudeCodeResult> {
      return runClaudeCode({
        baseUrl: herd.url,
        apiKey: herd.keys['claude-code'],
        prompt: CLAUDE_PROMPT,
        proxyUrl: herd.proxy.url,
        cwd: herd.dir,
        model,
        timeoutMs: CLI_TIMEOUT_MS,
      });
    }

    /** The run ended with a success result whose text quotes the note its Read tool returned. */
    function assertRoundTrip(run: ClaudeCodeResult): void {
      const result = run.events.find((event) => event.type === 'result');
      assert.equal(result?.subtype, 'success', explain(run));
      assert.equal(result?.is_error, false, explain(run));
      assert.match(String(result?.result), new RegExp(`${FINAL_PREFIX}[\\s\\S]*${NOTE_TEXT}`), explain(run));
      const toolUse = run.events.some((event) => event.type === 'assistant' && JSON.stringify(event).includes('"name":"Read"'));
      assert.ok(toolUse, `the upstream's Read call reached Claude Code\n${explain(run)}`);
    }

    it(`its default model (${CLAUDE_CODE_DEFAULT_MODEL}): a streamed tool round trip passed through to the Anthropic upstream`, async () => {
      const seen = herd.anthropic.requests.length;
      const run = await claude();
      assertRoundTrip(run);
      assert.deepEqual(paths(herd.anthropic, seen), ['/v1/messages', '/v1/messages']);
      assert.deepEqual(models(herd.anthropic, seen), [CLAUDE_CODE_DEFAULT_MODEL, CLAUDE_CODE_DEFAULT_MODEL]);
      await assertLedger('claude-code', CLAUDE_CODE_DEFAULT_MODEL, 'anthropic', 2);
    });

    it('its alias `sonnet` (claude-sonnet-5-5): the same round trip', async () => {
      const run = await claude('sonnet');
      assertRoundTrip(run);
      await assertLedger('claude-code', 'claude-sonnet-5-5', 'anthropic', 2);
    });

    it('a non-Claude model (gpt-4.1): bridged onto an OpenAI-compatible chat upstream', async () => {
      const seen = herd.chatRelay.requests.length;
      const run = await claude('gpt-4.1');
      assertRoundTrip(run);
      assert.deepEqual(paths(herd.chatRelay, seen), ['/v1/chat/completions', '/v1/chat/completions']);
      await assertLedger('claude-code', 'gpt-4.1', 'chat-relay', 2);
    });
  });

  describe('Codex (exec --json, Responses)', () => {
    async function codex(model?: string): Promise<CodexResult> {
      return runCodex({ baseUrl: herd.openaiBase, apiKey: herd.keys.codex, prompt: CODEX_PROMPT, proxyUrl: herd.proxy.url, cwd: herd.dir, model, timeoutMs: CLI_TIMEOUT_MS });
    }

    /** Codex ran the upstream's tool call (reading the note) and its final message quotes the output. */
    function assertRoundTrip(run: CodexResult): void {
      assert.equal(run.code, 0, explain(run));
      const messages = run.events
        .map((event) => event.item as { type?: string; text?: string } | undefined)
        .filter((item) => item?.type === 'agent_message')
        .map((item) => item?.text ?? '');
      assert.ok(
        messages.some((text) => text.startsWith(FINAL_PREFIX) && text.includes(NOTE_TEXT)),
        `a final message quoting the note\n${explain(run)}`,
      );
    }

    it(`its default model (${CODEX_DEFAULT_MODEL}): a code-mode tool round trip passed through to the relay's /responses`, async () => {
      const seen = herd.responsesRelay.requests.length;
      const run = await codex();
      assertRoundTrip(run);
      assert.deepEqual(paths(herd.responsesRelay, seen), ['/v1/responses', '/v1/responses']);
      await assertLedger('codex', CODEX_DEFAULT_MODEL, 'responses-relay', 2);
    });

    it('--model gpt-5-codex: exec_command round trip passed through to the relay /responses', async () => {
      const seen = herd.responsesRelay.requests.length;
      const run = await codex('gpt-5-codex');
      assertRoundTrip(run);
      assert.deepEqual(models(herd.responsesRelay, seen), ['gpt-5-codex', 'gpt-5-codex']);
      await assertLedger('codex', 'gpt-5-codex', 'responses-relay', 2);
    });

    it('--model deepseek-v3.2: bridged onto a chat-only upstream', async () => {
      const seen = herd.chatRelay.requests.length;
      const run = await codex('deepseek-v3.2');
      assertRoundTrip(run);
      assert.deepEqual(paths(herd.chatRelay, seen), ['/v1/chat/completions', '/v1/chat/completions']);
      assert.deepEqual(models(herd.chatRelay, seen), ['deepseek-chat', 'deepseek-chat']);
      await assertLedger('codex', 'deepseek-v3.2', 'chat-relay', 2);
    });

    it('--model claude-sonnet-5-5: bridged onto the Anthropic upstream', async () => {
      const seen = herd.anthropic.requests.length;
      const run = await codex('claude-sonnet-5-5');
      assertRoundTrip(run);
      assert.deepEqual(paths(herd.anthropic, seen), ['/v1/messages', '/v1/messages']);
      await assertLedger('codex', 'claude-sonnet-5-5', 'anthropic', 2);
    });
  });

  /** Runs a driver (test/clients/drivers) over its cases; one JSON line per case comes back. */
  async function drive(client: 'ai-sdk' | 'langchain', cases: string[]): Promise<Map<string, { ok: boolean; text?: string; error?: string }>> {
    const run = await runClient(process.execPath, [join(DRIVERS_DIR, `${client}.mjs`), ...cases], {
      cwd: herd.dir,
      env: { ...baseEnv(herd.dir, herd.proxy.url), HERD_BASE_URL: herd.openaiBase, HERD_API_KEY: herd.keys[client] },
      timeoutMs: CLI_TIMEOUT_MS,
    });
    assert.equal(run.code, 0, explain(run));
    const results = new Map<string, { ok: boolean; text?: string; error?: string }>();
    for (const line of run.stdout.split('\n').filter((l) => l.startsWith('{'))) {
      const result = JSON.parse(line) as { case: string; ok: boolean; text?: string; error?: string };
      results.set(result.case, result);
    }
    return results;
  }

  /** Every case answered; a tool case's text quotes the tool's output, the others the upstream's plain answer. */
  function assertCases(results: Map<string, { ok: boolean; text?: string; error?: string }>, cases: string[]): void {
    const failed = cases.filter((spec) => {
      const result = results.get(spec);
      const expected = spec.startsWith('tools:') ? 'sunny in Paris' : FINAL_PREFIX;
      return !result?.ok || !result.text?.includes(expected);
    });
    assert.deepEqual(
      failed.map((spec) => `${spec}: ${JSON.stringify(results.get(spec))}`),
      [],
    );
  }

  // Pass-through routes (the dialect the client speaks is the upstream's) and bridged ones (Herd translates).
  const AI_SDK_ROUTES = ['responses:gpt-5-codex', 'chat:gpt-4.1', 'messages:claude-sonnet-4-5', 'responses:deepseek-v3.2', 'messages:gpt-4.1', 'chat:claude-sonnet-5-5'];
  const LANGCHAIN_ROUTES = ['chat:gpt-4.1', 'responses:gpt-5-codex', 'chat:claude-sonnet-5-5', 'responses:deepseek-v3.2'];

  it('the AI SDK: generateText, streamText and a tool loop on @ai-sdk/openai (Responses and chat) and @ai-sdk/anthropic', async () => {
    const cases = ['generate', 'stream', 'tools'].flatMap((kind) => AI_SDK_ROUTES.map((route) => `${kind}:${route}`));
    assertCases(await drive('ai-sdk', cases), cases);
    // generate + stream + two tool steps per route
    const rows = await herd.ledgerRows('ai-sdk', 4 * AI_SDK_ROUTES.length);
    assert.equal(rows.length, 4 * AI_SDK_ROUTES.length, JSON.stringify(rows));
    assert.ok(
      rows.every((row) => row.status === 'ok'),
      JSON.stringify(rows),
    );
    assert.deepEqual(new Set(rows.map((row) => row.dialect)), new Set(['openai-responses', 'openai-chat', 'anthropic-messages']));
  });

  it('LangChain ChatOpenAI: invoke, stream and a tool call, on chat completions and the Responses API', async () => {
    const cases = ['invoke', 'stream', 'tools'].flatMap((kind) => LANGCHAIN_ROUTES.map((route) => `${kind}:${route}`));
    assertCases(await drive('langchain', cases), cases);
    const rows = await herd.ledgerRows('langchain', 4 * LANGCHAIN_ROUTES.length);
    assert.equal(rows.length, 4 * LANGCHAIN_ROUTES.length, JSON.stringify(rows));
    assert.ok(
      rows.every((row) => row.status === 'ok'),
      JSON.stringify(rows),
    );
  });
});
