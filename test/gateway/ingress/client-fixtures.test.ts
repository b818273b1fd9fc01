// Replays the requests real clients sent (test/fixtures/clients, recorded by test/clients/capture-client-requests.ts)
// through Herd's ingress decoders: a decoder change that would refuse Claude Code, Codex, the AI SDK or LangChain
// fails here, without the clients installed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { decodeMessagesRequest } from '../../../src/gateway/ingress/anthropic-messages/decode-messages-request.ts';
import { decodeResponsesRequest } from '../../../src/gateway/ingress/openai-responses/decode-responses-request.ts';
import { validateChatRequest } from '../../../src/gateway/ingress/openai-chat/validate-chat-request.ts';

const FIXTURES = 'test/fixtures/clients';

interface ClientFixture {
  captured_from: string;
  client: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

type Json = Record<string, unknown>;
const items = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

/** The decoder Herd runs for the path the client posted to (query strings such as Claude Code's ?beta=true aside). */
function decode(fixture: ClientFixture): ChatRequest {
  const path = fixture.path.split('?')[0];
  if (path === '/v1/messages') return decodeMessagesRequest(fixture.body);
  if (path === '/v1/messages/count_tokens') return decodeMessagesRequest(fixture.body, { countOnly: true });
  if (path === '/v1/responses') return decodeResponsesRequest(fixture.body).request;
  if (path === '/v1/chat/completions') return validateChatRequest(fixture.body);
  throw new Error(`no decoder for ${fixture.method} ${fixture.path}`);
}

/** How many tool results the client sent back, counted in its own dialect. */
function toolResultsSent(fixture: ClientFixture): number {
  const body = fixture.body;
  if (fixture.path.startsWith('/v1/messages')) return items(body.messages).flatMap((m) => items(m.content).filter((block) => block.type === 'tool_result')).length;
  if (fixture.path.startsWith('/v1/chat/completions')) return items(body.messages).filter((m) => m.role === 'tool').length;
  return items(body.input).filter((item) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output').length;
}

function loadFixtures(): Array<{ file: string; fixture: ClientFixture }> {
  const out: Array<{ file: string; fixture: ClientFixture }> = [];
  for (const client of readdirSync(FIXTURES).sort()) {
    for (const name of readdirSync(join(FIXTURES, client)).sort()) {
      if (!name.endsWith('.json')) continue;
      const file = join(FIXTURES, client, name);
      out.push({ file, fixture: JSON.parse(readFileSync(file, 'utf8')) as ClientFixture });
    }
  }
  return out;
}

describe('requests recorded from real clients decode', () => {
  const fixtures = loadFixtures();

  it('there are fixtures for every client the suite runs', () => {
    const clients = new Set(fixtures.map(({ fixture }) => fixture.client));
    assert.deepEqual([...clients].sort(), ['ai-sdk', 'claude-code', 'codex', 'langchain']);
  });

  for (const { file, fixture } of fixtures) {
    it(`${file} (${fixture.captured_from}, ${fixture.method} ${fixture.path})`, () => {
      const request = decode(fixture);
      assert.equal(request.model, fixture.body.model);
      assert.ok(request.messages.length > 0, 'the conversation decodes to messages');
      // The round trip's second request: the tool's output reaches the upstream as a tool message.
      const sent = toolResultsSent(fixture);
      assert.equal(request.messages.filter((message) => message.role === 'tool').length, sent, 'every tool result becomes a tool message');
    });
  }
});
