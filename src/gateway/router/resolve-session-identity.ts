// A request's session identity for prompt-cache affinity, from the first source that has one: the
// x-herd-session header, Claude Code's session (its header, or the session part of metadata.user_id),
// OpenAI's prompt_cache_key, else a digest of the prompt's opening (docs/gateway.md, "Prompt-cache affinity").
import { createHash } from 'node:crypto';
import type { ChatRequest } from '../protocol/chat-types.ts';
import { isJsonObject, type JsonObject } from '../protocol/check-json-value.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import type { SessionIdentity, SessionSource } from './cache-affinity.ts';
import { hashPromptPrefix } from './hash-prompt-prefix.ts';

export const SESSION_HEADER = 'x-herd-session';
/** Claude Code 2.1.86 and later send their session id in this header too. */
export const CLAUDE_CODE_SESSION_HEADER = 'x-claude-code-session-id';

const ONE_HOUR_MS = 3_600_000;

export interface SessionSources {
  headers: Readonly<Record<string, string | string[] | undefined>>;
  dialect: IngressDialect;
  /** The client's body as sent, when the transport kept it (Anthropic Messages, Responses). */
  body?: JsonObject | undefined;
}

export interface SessionSettings {
  /** Characters of the prompt's opening hashed when nothing names the session; 0: no such identity. */
  prefixChars: number;
  /** How long a choice lasts without cache_control.ttl: 1h. */
  ttlMs: number;
}

export function resolveSessionIdentity(request: ChatRequest, sources: SessionSources, settings: SessionSettings): SessionIdentity | undefined {
  const found = findNamedSession(request, sources);
  const ttlMs = request.cache_control?.ttl === '1h' ? Math.max(ONE_HOUR_MS, settings.ttlMs) : settings.ttlMs;
  if (found !== undefined) return { source: found.source, key: digest(`${found.source}\u0000${found.id}`), ttlMs };
  const prefix = hashPromptPrefix(request, settings.prefixChars);
  return prefix === undefined ? undefined : { source: 'prefix', key: prefix.slice(0, 32), ttlMs };
}

function findNamedSession(request: ChatRequest, sources: SessionSources): { source: SessionSource; id: string } | undefined {
  const header = readHeader(sources.headers, SESSION_HEADER);
  if (header !== undefined) return { source: 'header', id: header };
  const claude = readHeader(sources.headers, CLAUDE_CODE_SESSION_HEADER) ?? readClaudeCodeSession(request, sources);
  if (claude !== undefined) return { source: 'claude-code', id: claude };
  const cacheKey = request.prompt_cache_key ?? stringMember(sources.body, 'prompt_cache_key');
  if (cacheKey !== undefined && cacheKey !== '') return { source: 'prompt-cache-key', id: cacheKey };
  return undefined;
}

function readClaudeCodeSession(request: ChatRequest, sources: SessionSources): string | undefined {
  if (sources.dialect !== 'anthropic-messages') return undefined;
  const metadata = sources.body?.metadata;
  const userId = isJsonObject(metadata) && typeof metadata.user_id === 'string' ? metadata.user_id : request.user;
  return userId === undefined ? undefined : parseClaudeCodeSession(userId);
}

/**
 * The session part of Claude Code's metadata.user_id: a JSON text with `session_id` (2.1 and later:
 * `{"device_id":…,"account_uuid":…,"session_id":…}`), or the older `user_<hash>_account_<uuid>_session_<uuid>`.
 * Any other user id names a user, not a session: undefined (one user's sessions need not share a deployment).
 */
export function parseClaudeCodeSession(userId: string): string | undefined {
  const text = userId.trim();
  if (text.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (isJsonObject(parsed) && typeof parsed.session_id === 'string' && parsed.session_id !== '') return parsed.session_id;
    } catch {
      return undefined;
    }
    return undefined;
  }
  const legacy = /_session_([^_\s]+)$/.exec(text);
  return legacy?.[1];
}

function readHeader(headers: SessionSources['headers'], name: string): string | undefined {
  const value = headers[name];
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  return text === undefined || text === '' ? undefined : text;
}

function stringMember(body: JsonObject | undefined, name: string): string | undefined {
  const value = body?.[name];
  return typeof value === 'string' ? value : undefined;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
