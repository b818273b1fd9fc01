// Reasoning across dialects through Herd's real HTTP interface: what each upstream receives for a client's
// reasoning setting, how the reasoning comes back in the client's dialect, and the ledger row's reasoning
// figures per upstream dialect (Herd's count for Anthropic, the upstream's own for OpenAI and Gemini).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { countTokens } from '../../src/gateway/protocol/usage-estimate.ts';
import { anthropicMessage, openAIChunk } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, sendSse, startMockUpstream, type MockUpstream, type SseFrame } from '../gateway/helpers/mock-upstream.ts';

const MASTER = 'sk-herd-master-key-for-the-reasoning-tests-0123456789';
const ENV = { HOLYSHEEP_API_KEY: 'sk-upstream-hs', ANTHROPIC_API_KEY: 'sk-upstream-ant', GEMINI_API_KEY: 'AIzaSy-upstream', HERD_REASON_MASTER: MASTER };
const CLAUDE_THINKING = 'The user greets me in French; answer in kind.';
const RELAY_REASONING = 'Greeting, so a greeting back.';

/** A DeepSeek-style relay: reasoning_content beside the answer, reasoning_tokens in the usage details. */
const relayUsage = { prompt_tokens: 12, completion_tokens: 20, total_tokens: 32, completion_tokens_details: { reasoning_tokens: 7 } };
function relayCompletion(model: string): Record<string, unknown> {
  return {
    id: 'chatcmpl-r',
    object: 'chat.completion',
    created: 1,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Bonjour', reasoning_content: RELAY_REASONING }, finish_reason: 'stop', logprobs: null }],
    usage: relayUsage,
  };
}
function relayFrames(model: string): SseFrame[] {
  return [
    { data: openAIChunk(model, { role: 'assistant', content: null, reasoning_content: 'Greeting, ' }) },
    { data: openAIChunk(model, { reasoning_content: 'so a greeting back.' }) },
    { data: openAIChunk(model, { content: 'Bonjour' }) },
    { data: openAIChunk(model, {}, 'stop') },
    { data: { id: 'chatcmpl-r', object: 'chat.completion.chunk', created: 1, model, choices: [], usage: relayUsage } },
    { data: '[DONE]' },
  ];
}

describe('reasoning across dialects, end to end', () => {
  let anthropic: MockUpstream;
  let relay: MockUpstream;
  let gemini: MockUpstream;
  let server: HerdServer;
  let dir: string;
  let db: string;
  let claudeThinkingTokens: number;

  before(async () => {
    claudeThinkingTokens = await countTokens(CLAUDE_THINKING);
    anthropic = await startMockUpstream((req, res) => {
      const body = req.body as { model: string };
      sendJson(res, 200, {
        ...anthropicMessage(body.model, 'Bonjour'),
        content: [
          { type: 'thinking', thinking: CLAUDE_THINKING, signature: 'sig-claude' },
          { type: 'text', text: 'Bonjour' },
        ],
        usage: { input_tokens: 20, output_tokens: 40 },
      });
    });
    relay = await startMockUpstream((req, res) => {
      const body = req.body as { stream?: boolean; model: string };
      return body.stream ? sendSse(res, relayFrames(body.model)) : sendJson(res, 200, relayCompletion(body.model));
    });
    gemini = await startMockUpstream((_req, res) =>
      sendJson(res, 200, {
        candidates: [{ content: { role: 'model', parts: [{ text: 'A greeting.', thought: true }, { text: 'Bonjour' }] }, index: 0, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 3, thoughtsTokenCount: 11, totalTokenCount: 21 },
        modelVersion: 'gemini-2.5-flash',
      }),
    );
    dir = mkdtempSync(join(tmpdir(), 'herd-reasoning-e2e-'));
    db = join(dir, 'herd.db');
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_REASON_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
providers:
  holysheep: { type: openai, base_url: "${relay.url}/v1", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 } }
  anthropic: { type: anthropic, base_url: "${anthropic.url}", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 } }
  gemini: { type: gemini, base_url: "${gemini.url}", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 } }
models:
  claude-sonnet-4-5:
    price: { input: 3.00, output: 15.00 }
    deployments: [{ provider: anthropic, upstream_model: claude-sonnet-4-5-20250929 }]
  claude-opus-4-6:
    price: { input: 5.00, output: 25.00 }
    deployments: [{ provider: anthropic }]
  deepseek-reasoner:
    price: { input: 0.50, output: 2.00 }
    deployments: [{ provider: holysheep }]
  gemini-2.5-flash:
    price: { input: 0.30, output: 2.50 }
    deployments: [{ provider: gemini }]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
  });
  after(async () => {
    await server?.close();
    await anthropic?.close();
    await relay?.close();
    await gemini?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const upstreamBody = (upstream: MockUpstream) => upstream.requests.at(-1)?.body as Record<string, unknown>;
  type Row = { model: string; dialect: string; reasoning_tokens: number; reported_reasoning_tokens: number | null; completion_tokens: number };
  let rowsSeen = 0;
  /** The next request's ledger row: polled for, as a stream's row may commit just after the client's last read. */
  async function nextRow(): Promise<Row> {
    const sqlite = new Database(db, { readonly: true });
    try {
      const query = sqlite.prepare('SELECT model, dialect, reasoning_tokens, reported_reasoning_tokens, completion_tokens FROM ledger_requests ORDER BY rowid LIMIT 1 OFFSET ?');
      for (let i = 0; i < 400; i++) {
        const row = query.get(rowsSeen) as Row | undefined;
        if (row !== undefined) {
          rowsSeen++;
          return row;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no ledger row after ${rowsSeen}`);
    } finally {
      sqlite.close();
    }
  }

  it("Messages thinking -> OpenAI-compatible: reasoning_effort by the budget's range; the relay's reasoning comes back as a thinking block", async () => {
    const client = new Anthropic({ apiKey: MASTER, baseURL: server.httpUrl, maxRetries: 0 });
    const message = await client.messages.create({
      model: 'deepseek-reasoner',
      max_tokens: 16000,
      thinking: { type: 'enabled', budget_tokens: 10000 },
      messages: [{ role: 'user', content: 'Bonjour ?' }],
    });
    const sent = upstreamBody(relay);
    assert.equal(sent.reasoning_effort, 'medium');
    assert.equal(sent.thinking, undefined);
    // No signature: the reasoning is not Anthropic's.
    assert.deepEqual(message.content, [
      { type: 'thinking', thinking: RELAY_REASONING, signature: '' },
      { type: 'text', text: 'Bonjour' },
    ]);
    assert.deepEqual(await nextRow(), { model: 'deepseek-reasoner', dialect: 'anthropic-messages', reasoning_tokens: 7, reported_reasoning_tokens: 7, completion_tokens: 20 });

    const stream = client.messages.stream({
      model: 'deepseek-reasoner',
      max_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'Bonjour ?' }],
    });
    const final = await stream.finalMessage();
    assert.equal(upstreamBody(relay).reasoning_effort, 'low');
    assert.deepEqual(final.content, [
      { type: 'thinking', thinking: RELAY_REASONING, signature: '' },
      { type: 'text', text: 'Bonjour' },
    ]);
    assert.equal((await nextRow()).reported_reasoning_tokens, 7);
  });

  it('Messages thinking disabled (with an effort beside it) -> OpenAI-compatible: no reasoning_effort, named in x-herd-dropped', async () => {
    const answer = await fetch(`${server.httpUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': MASTER, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'deepseek-reasoner',
        max_tokens: 512,
        thinking: { type: 'disabled' },
        output_config: { effort: 'max' },
        messages: [{ role: 'user', content: 'Bonjour ?' }],
      }),
    });
    assert.equal(answer.status, 200);
    await answer.json();
    assert.equal('reasoning_effort' in upstreamBody(relay), false);
    assert.match(answer.headers.get('x-herd-dropped') ?? '', /\bthinking\b/);
    await nextRow();
  });

  it('chat reasoning_effort -> Anthropic: a thinking budget with room in max_tokens, temperature dropped and named; thinking back with its signature, counted in the ledger', async () => {
    const client = new OpenAI({ apiKey: MASTER, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: 'claude-sonnet-4-5', reasoning_effort: 'high', temperature: 0.3, messages: [{ role: 'user', content: 'Bonjour ?' }] })
      .withResponse();
    const sent = upstreamBody(anthropic);
    assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 24576 });
    assert.equal(sent.max_tokens, 4096 + 24576);
    assert.equal(sent.temperature, undefined);
    assert.match(response.headers.get('x-herd-dropped') ?? '', /\btemperature\b/);
    const answer = data.choices[0]?.message as unknown as { content: string; reasoning_content?: string; reasoning_signature?: string };
    assert.equal(answer.content, 'Bonjour');
    assert.equal(answer.reasoning_content, CLAUDE_THINKING);
    assert.equal(answer.reasoning_signature, 'sig-claude');
    assert.equal(data.usage?.completion_tokens_details?.reasoning_tokens, claudeThinkingTokens);
    // Anthropic reports no reasoning figure apart: the row has Herd's count and NULL for the reported one.
    assert.deepEqual(await nextRow(), {
      model: 'claude-sonnet-4-5',
      dialect: 'openai-chat',
      reasoning_tokens: claudeThinkingTokens,
      reported_reasoning_tokens: null,
      completion_tokens: 40,
    });
  });

  it('chat reasoning_effort -> Claude 4.6: adaptive thinking with the effort in output_config', async () => {
    const client = new OpenAI({ apiKey: MASTER, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
    await client.chat.completions.create({ model: 'claude-opus-4-6', reasoning_effort: 'low', max_completion_tokens: 300, messages: [{ role: 'user', content: 'Bonjour ?' }] });
    const sent = upstreamBody(anthropic);
    assert.deepEqual([sent.thinking, sent.output_config, sent.max_tokens], [{ type: 'adaptive' }, { effort: 'low' }, 300]);
    await nextRow();
  });

  it("Responses reasoning.effort -> Gemini: thinkingConfig; the thoughts come back as a reasoning summary; the ledger keeps Gemini's figure", async () => {
    const client = new OpenAI({ apiKey: MASTER, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
    const response = await client.responses.create({ model: 'gemini-2.5-flash', input: 'Bonjour ?', reasoning: { effort: 'low' } });
    const sent = upstreamBody(gemini) as { generationConfig?: { thinkingConfig?: unknown } };
    assert.deepEqual(sent.generationConfig?.thinkingConfig, { thinkingBudget: 2048, includeThoughts: true });
    const reasoning = response.output.find((item) => item.type === 'reasoning');
    assert.deepEqual(reasoning?.type === 'reasoning' ? reasoning.summary : undefined, [{ type: 'summary_text', text: 'A greeting.' }]);
    assert.equal(response.output_text, 'Bonjour');
    assert.equal(response.usage?.output_tokens_details.reasoning_tokens, 11);
    assert.deepEqual(await nextRow(), { model: 'gemini-2.5-flash', dialect: 'openai-responses', reasoning_tokens: 11, reported_reasoning_tokens: 11, completion_tokens: 14 });
  });
});
