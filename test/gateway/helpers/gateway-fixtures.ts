// Shared pieces for router and chat-service tests: a seeded RNG, configs parsed by the real schema,
// OpenAI/Anthropic wire bodies, and scripted upstream behaviours (ok, 429, 503, hang, reset...).
import type { ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { gatewayConfigSchema, type GatewayConfig } from '../../../src/config/gateway-config-schema.ts';
import { sendJson, sendSse, type MockHandler, type SseFrame } from './mock-upstream.ts';

export { createSeededRandom as seededRandom } from '../../../src/core/seeded-random.ts';

/** A gateway config from YAML text, validated exactly as herd.yaml is. */
export function gatewayConfig(yaml: string): GatewayConfig {
  return gatewayConfigSchema.parse(parseYaml(yaml) ?? {});
}

export function openAICompletion(model: string, text: string): Record<string, unknown> {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1741569952,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } },
  };
}

export function openAIChunk(model: string, delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1694268190, model, choices: [{ index: 0, delta, finish_reason: finish }] };
}

export function openAIStreamFrames(model: string, parts: string[], usage = true): SseFrame[] {
  const frames: SseFrame[] = [{ data: openAIChunk(model, { role: 'assistant', content: '' }) }];
  for (const part of parts) frames.push({ data: openAIChunk(model, { content: part }) });
  frames.push({ data: openAIChunk(model, {}, 'stop') });
  if (usage) {
    frames.push({
      data: {
        id: 'chatcmpl-s',
        object: 'chat.completion.chunk',
        created: 1694268190,
        model,
        choices: [],
        usage: { prompt_tokens: 9, completion_tokens: parts.length, total_tokens: 9 + parts.length },
      },
    });
  }
  frames.push({ data: '[DONE]' });
  return frames;
}

export function anthropicMessage(model: string, text: string): Record<string, unknown> {
  return {
    id: 'msg_test',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5 },
  };
}

/** One upstream reaction. */
export type Behaviour =
  | { kind: 'ok' }
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'hang' }
  /** Close the connection before any response. */
  | { kind: 'reset' }
  /** An SSE stream that resets after `after` frames. */
  | { kind: 'stream-reset'; after: number };

export const ok: Behaviour = { kind: 'ok' };
export const hang: Behaviour = { kind: 'hang' };
export const reset: Behaviour = { kind: 'reset' };
export const status = (code: number, headers?: Record<string, string>, body?: unknown): Behaviour => ({ kind: 'status', status: code, headers, body });

export interface ScriptedUpstream {
  handler: MockHandler;
  /** Behaviours for the next requests, in order; after they run out, `ok`. */
  script(...behaviours: Behaviour[]): void;
}

/**
 * An upstream answering in one dialect: `ok` sends `okJson` (or `okFrames` as SSE when the request
 * asked to stream); failures follow the script.
 */
export function scriptedUpstream(dialect: { okJson: unknown; okFrames: SseFrame[]; errorBody: (status: number) => unknown }): ScriptedUpstream {
  let queue: Behaviour[] = [];
  const handler: MockHandler = async (req, res) => {
    const behaviour = queue.shift() ?? ok;
    const wantsStream = typeof req.body === 'object' && req.body !== null && (req.body as { stream?: unknown }).stream === true;
    await act(behaviour, res, wantsStream, dialect);
  };
  return {
    handler,
    script: (...behaviours) => {
      queue = behaviours;
    },
  };
}

async function act(
  behaviour: Behaviour,
  res: ServerResponse,
  wantsStream: boolean,
  dialect: { okJson: unknown; okFrames: SseFrame[]; errorBody: (status: number) => unknown },
): Promise<void> {
  switch (behaviour.kind) {
    case 'ok':
      if (wantsStream) await sendSse(res, dialect.okFrames);
      else sendJson(res, 200, dialect.okJson);
      return;
    case 'status':
      sendJson(res, behaviour.status, behaviour.body ?? dialect.errorBody(behaviour.status), behaviour.headers);
      return;
    case 'hang':
      return;
    case 'reset':
      res.socket?.destroy();
      return;
    case 'stream-reset':
      await sendSse(res, dialect.okFrames, { resetAfter: behaviour.after });
  }
}

export const openAIErrorBody = (code: number): unknown => ({
  error: { message: code === 429 ? 'Rate limit exceeded' : `failure ${code}`, type: code === 429 ? 'rate_limit_error' : 'server_error', param: null, code: null },
});

export const anthropicErrorBody = (code: number): unknown => ({
  type: 'error',
  error: { type: code === 429 ? 'rate_limit_error' : code === 529 ? 'overloaded_error' : 'api_error', message: `failure ${code}` },
});
