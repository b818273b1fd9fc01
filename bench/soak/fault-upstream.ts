// A fake OpenAI chat-completions upstream for the soak: every request names its client request in the
// prompt ("soak <marker>"), the first call of a marker may be a fault (429 with Retry-After, 5xx, a hang
// past the deadline, a reset mid-stream, malformed SSE, a slow first byte, no usage), and every call is
// recorded, so the books can be checked against what the upstream really saw and reported.
import type { ServerResponse } from 'node:http';
import { pause, sendJson, startMockUpstream, type MockUpstream, type RecordedRequest } from '../../test/gateway/helpers/mock-upstream.ts';

export const FAULT_MODES = ['ok', 'rate-limited', 'server-error', 'hang', 'reset-mid-stream', 'malformed-sse', 'slow-first-byte', 'no-usage'] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

/** The mode of a marker's first call: mostly ok, one in ten of each fault (so retries and fallbacks run). */
export function faultOf(marker: number): FaultMode {
  const slot = marker % 20;
  return slot < FAULT_MODES.length - 1 ? (FAULT_MODES[slot + 1] as FaultMode) : 'ok';
}

/** The usage the fake reports for a marker: completion tokens name the request in the ledger. */
export const reportedUsage = (marker: number) => ({ prompt_tokens: 10, completion_tokens: 1000 + marker, total_tokens: 1010 + marker });

export interface UpstreamCall {
  marker: number;
  /** Which upstream (provider) was called, and by which replica (the base URL's path says it). */
  upstream: string;
  replica: string;
  stream: boolean;
  mode: FaultMode;
  at: number;
  /** The usage sent back, when the call completed with one. */
  usage: { prompt_tokens: number; completion_tokens: number } | undefined;
}

export interface FaultUpstreams {
  urls: Record<string, string>;
  calls: UpstreamCall[];
  close(): Promise<void>;
}

const markerOf = (req: RecordedRequest) => Number(/soak (\d+)/.exec(JSON.stringify(req.body))?.[1] ?? -1);

/** `names` fake providers sharing one call log; a marker's fault applies to its first call across all of them. */
/** `faults: false`: every call answers ok (bench/deploy's rolling restart wants a well-behaved upstream). */
export async function startFaultUpstreams(names: readonly string[], options: { hangMs: number; slowMs: number; faults?: boolean }): Promise<FaultUpstreams> {
  const calls: UpstreamCall[] = [];
  const seen = new Set<number>();
  const quieted = new WeakSet<object>();
  const servers: MockUpstream[] = [];
  const urls: Record<string, string> = {};
  for (const name of names) {
    const server = await startMockUpstream(async (req, res, raw) => {
      const marker = markerOf(req);
      const body = req.body as { stream?: boolean };
      const stream = body.stream === true;
      const first = !seen.has(marker);
      seen.add(marker);
      const mode: FaultMode = first && options.faults !== false ? faultOf(marker) : 'ok';
      const call: UpstreamCall = { marker, upstream: name, replica: /^\/(\w+)\//.exec(req.url)?.[1] ?? '?', stream, mode, at: Date.now(), usage: undefined };
      calls.push(call);
      // Once per connection (keep-alive carries many calls): a reset the fake causes must not throw.
      if (!quieted.has(raw.socket)) {
        quieted.add(raw.socket);
        raw.socket.on('error', () => undefined);
      }
      await answer(res, marker, stream, mode, options, (usage) => {
        call.usage = usage;
      });
    });
    servers.push(server);
    urls[name] = server.url;
  }
  return {
    urls,
    calls,
    close: async () => {
      await Promise.all(servers.map((s) => s.close()));
    },
  };
}

async function answer(
  res: ServerResponse,
  marker: number,
  stream: boolean,
  mode: FaultMode,
  options: { hangMs: number; slowMs: number },
  sent: (usage: { prompt_tokens: number; completion_tokens: number }) => void,
): Promise<void> {
  const usage = reportedUsage(marker);
  const id = `chatcmpl-soak-${marker}`;
  switch (mode) {
    case 'rate-limited':
      sendJson(res, 429, { error: { message: 'Rate limit reached (soak)', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after': '1' });
      return;
    case 'server-error':
      sendJson(res, 500, { error: { message: 'The server had an error (soak)', type: 'server_error' } });
      return;
    case 'hang':
      // Past the provider's timeout: Herd gives up on the call and retries; the socket closes then.
      await pause(options.hangMs);
      if (!res.destroyed) res.destroy();
      return;
    case 'slow-first-byte':
      await pause(options.slowMs);
      break;
    default:
      break;
  }
  if (!stream) {
    if (mode === 'reset-mid-stream') {
      res.socket?.destroy();
      return;
    }
    if (mode === 'malformed-sse') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id": "chatcmpl-soak", "choices": [');
      return;
    }
    const withUsage = mode !== 'no-usage';
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4.1',
      choices: [{ index: 0, message: { role: 'assistant', content: `answer ${marker}` }, finish_reason: 'stop' }],
      ...(withUsage ? { usage } : {}),
    });
    if (withUsage) sent(usage);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const frame = (choices: unknown[], extra: object = {}) => `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices, ...extra })}\n\n`;
  res.write(frame([{ index: 0, delta: { role: 'assistant', content: 'ans' }, finish_reason: null }]));
  await pause(5);
  if (mode === 'reset-mid-stream') {
    res.socket?.destroy();
    return;
  }
  if (mode === 'malformed-sse') {
    res.end('data: {"id": "chatcmpl-soak", "choices": [{"delta": \n\n');
    return;
  }
  res.write(frame([{ index: 0, delta: { content: `wer ${marker}` }, finish_reason: 'stop' }]));
  if (mode === 'no-usage') {
    res.end('data: [DONE]\n\n');
    return;
  }
  res.end(`${frame([], { usage })}data: [DONE]\n\n`);
  sent(usage);
}
