// A request's session identity for prompt-cache affinity: the sources in order (x-herd-session, Claude
// Code's header and metadata.user_id in both its formats, prompt_cache_key, the prompt's opening), the
// opening's digest stable across the turns of one conversation, and the TTL from cache_control.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatMessage, ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { hashPromptPrefix } from '../../../src/gateway/router/hash-prompt-prefix.ts';
import { parseClaudeCodeSession, resolveSessionIdentity, type SessionSources } from '../../../src/gateway/router/resolve-session-identity.ts';

const SETTINGS = { prefixChars: 8192, ttlMs: 300_000 };
const SESSION = '54c1eb09-bc4c-4d2f-98eb-6d2ab2d5e2fe';
const JSON_USER_ID = JSON.stringify({ device_id: 'd3v1ce', account_uuid: '', session_id: SESSION });
const LEGACY_USER_ID = `user_5f2a9c_account_7b1e4d2a-1111-4222-8333-944445555666_session_${SESSION}`;

const opening: ChatMessage[] = [
  { role: 'system', content: 'You are a careful coding agent.' },
  { role: 'user', content: 'Fix the failing test in src/app.ts' },
];
const chat = (extra: Partial<ChatRequest> = {}, messages: ChatMessage[] = opening): ChatRequest => ({ model: 'claude-sonnet-4.5', messages, ...extra });
const sources = (extra: Partial<SessionSources> = {}): SessionSources => ({ headers: {}, dialect: 'openai-chat', ...extra });
const resolve = (request: ChatRequest, from: SessionSources = sources()) => resolveSessionIdentity(request, from, SETTINGS);

describe('session identity', () => {
  it('Claude Code user ids: the JSON form (2.1 and later) and the older user_…_account_…_session_… form give the session; other ids none', () => {
    assert.equal(parseClaudeCodeSession(JSON_USER_ID), SESSION);
    assert.equal(parseClaudeCodeSession(LEGACY_USER_ID), SESSION);
    assert.equal(parseClaudeCodeSession('alice'), undefined, 'a plain user id names a user, not a session');
    assert.equal(parseClaudeCodeSession('{"device_id":"d"}'), undefined);
    assert.equal(parseClaudeCodeSession('{not json'), undefined);
  });

  it('sources in order: x-herd-session, Claude Code (header, then metadata.user_id), prompt_cache_key, the opening', () => {
    const anthropic = (headers: SessionSources['headers']) => sources({ headers, dialect: 'anthropic-messages', body: { metadata: { user_id: JSON_USER_ID } } });
    const request = chat({ prompt_cache_key: 'pck-1', user: JSON_USER_ID });
    assert.equal(resolve(request, anthropic({ 'x-herd-session': 'mine', 'x-claude-code-session-id': SESSION }))?.source, 'header');
    assert.equal(resolve(request, anthropic({ 'x-claude-code-session-id': SESSION }))?.source, 'claude-code');
    assert.equal(resolve(request, anthropic({}))?.source, 'claude-code');
    assert.equal(resolve(request)?.source, 'prompt-cache-key', "an OpenAI chat client's user is not parsed as Claude Code's");
    assert.equal(resolve(chat())?.source, 'prefix');
    assert.equal(resolveSessionIdentity(chat(), sources(), { ...SETTINGS, prefixChars: 0 }), undefined, 'prefix_kb: 0 turns the digest off');
  });

  it("Claude Code's header and its metadata name the same session; the key never carries the client's text", () => {
    const fromHeader = resolve(chat(), sources({ headers: { 'x-claude-code-session-id': SESSION }, dialect: 'anthropic-messages' }));
    const fromMetadata = resolve(chat({ user: LEGACY_USER_ID }), sources({ dialect: 'anthropic-messages' }));
    assert.equal(fromHeader?.key, fromMetadata?.key);
    assert.match(fromHeader?.key ?? '', /^[0-9a-f]{32}$/);
    assert.notEqual(resolve(chat(), sources({ headers: { 'x-herd-session': SESSION } }))?.key, fromHeader?.key, 'sources do not collide');
  });

  it('the opening digest is the same for every turn of a conversation and differs between conversations', () => {
    const turn1 = chat();
    const turn5 = chat({}, [
      ...opening,
      { role: 'assistant', content: 'Looking at it.' },
      { role: 'user', content: 'Also run the linter' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"npm run lint"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ]);
    assert.equal(resolve(turn1)?.key, resolve(turn5)?.key);
    assert.notEqual(resolve(turn1)?.key, resolve(chat({}, [opening[0]!, { role: 'user', content: 'Another task' }]))?.key);
    const withTools = chat({ tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }] });
    assert.notEqual(resolve(withTools)?.key, resolve(turn1)?.key, 'tools are part of the cached prefix');
  });

  it('maxChars bounds the tools and system part and, apart, the first user message', () => {
    const long = 'x'.repeat(20_000);
    const user = (text: string, system = 'Be brief.') =>
      hashPromptPrefix(
        chat({}, [
          { role: 'system', content: system },
          { role: 'user', content: text },
        ]),
        8192,
      );
    assert.equal(user(`${long}a`), user(`${long}b`), 'past the bound nothing counts');
    assert.notEqual(user('a'), user('b'));
    // One long system prompt shared by every conversation of an application: the first user message still tells them apart.
    assert.notEqual(user('first task', long), user('second task', long));
    assert.equal(user('first task', `${long}a`), user('first task', `${long}b`));
  });

  it("the choice lasts the prompt cache's lifetime: ttl_s, or an hour when cache_control asks for 1h", () => {
    assert.equal(resolve(chat())?.ttlMs, 300_000);
    assert.equal(resolve(chat({ cache_control: { type: 'ephemeral' } }))?.ttlMs, 300_000);
    assert.equal(resolve(chat({ cache_control: { type: 'ephemeral', ttl: '1h' } }))?.ttlMs, 3_600_000);
  });
});
