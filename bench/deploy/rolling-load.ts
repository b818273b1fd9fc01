// The rolling-restart test's client: closed-loop workers on keep-alive connections (one undici Agent)
// through HAProxy, a mix of chat (JSON and streamed, across three keys) and KServe infer on `simple`;
// every request's outcome is recorded with its times and the replica HAProxy says answered it.
import { Agent, request } from 'undici';
import { pick } from '../soak/soak.ts';

export type RequestKind = 'chat' | 'stream' | 'infer' | 'cache-probe';

export interface LoadKey {
  name: 'plain' | 'rpm' | 'budget';
  secret: string;
}

export interface LoadRequest {
  marker: number;
  kind: RequestKind;
  key: LoadKey['name'] | undefined;
  sentAt: number;
  endedAt: number;
  status: number | undefined;
  /** The x-rr-server header HAProxy set (which replica, or HAProxy's own answer when none). */
  server: string | undefined;
  /** 200 and the whole answer (choices; one [DONE] and no error event; infer outputs). */
  complete: boolean;
  /** The gateway's error code on a refusal, or the connection error's code. */
  errorCode: string | undefined;
  /** The start of the error's message (a refusal's or a connection error's), for the failure table. */
  message: string | undefined;
  cache: string | undefined;
}

/** An expected refusal: the RPM key's 429 rate_limit_exceeded, the budget key's 429 insufficient_quota. */
export function expectedRefusal(r: LoadRequest): boolean {
  return r.status === 429 && ((r.key === 'rpm' && r.errorCode === 'rate_limit_exceeded') || (r.key === 'budget' && r.errorCode === 'insufficient_quota'));
}

export function failed(r: LoadRequest): boolean {
  return !(r.complete || expectedRefusal(r));
}

/** Large on purpose: the budget reservation (max_tokens × price) covers what the fake upstream reports. */
const MAX_TOKENS = 100_000;
const TIMEOUT_MS = 30_000;
const INFER_BODY = JSON.stringify({
  inputs: [
    { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: Array.from({ length: 16 }, (_, i) => i) },
    { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: Array.from({ length: 16 }, () => 1) },
  ],
});

export function createAgent(concurrency: number): Agent {
  return new Agent({ connections: concurrency, keepAliveTimeout: 8_000, pipelining: 1 });
}

/** The mix by marker: ¼ infer, ⅜ chat JSON, ⅜ chat streamed; chat keys 75% plain, 15% rpm, 10% budget. */
export function planOf(marker: number, keys: readonly LoadKey[], plainOnly: boolean): { kind: RequestKind; key: LoadKey | undefined } {
  const k = pick(marker, 3, 8);
  const kind: RequestKind = k < 2 ? 'infer' : k < 5 ? 'chat' : 'stream';
  if (kind === 'infer') return { kind, key: undefined };
  const slot = plainOnly ? 19 : pick(marker, 1, 20);
  const name = slot < 3 ? 'rpm' : slot < 5 ? 'budget' : 'plain';
  return { kind, key: keys.find((key) => key.name === name) };
}

export async function send(agent: Agent, base: string, marker: number, kind: RequestKind, key: LoadKey | undefined): Promise<LoadRequest> {
  const sentAt = Date.now();
  const rec: LoadRequest = {
    marker,
    kind,
    key: key?.name,
    sentAt,
    endedAt: 0,
    status: undefined,
    server: undefined,
    complete: false,
    errorCode: undefined,
    message: undefined,
    cache: undefined,
  };
  try {
    const infer = kind === 'infer';
    const body = infer
      ? INFER_BODY
      : JSON.stringify({
          model: 'gpt-4.1',
          messages: [{ role: 'user', content: `soak ${marker}` }],
          max_tokens: MAX_TOKENS,
          ...(kind === 'stream' ? { stream: true } : {}),
          ...(kind === 'cache-probe' ? { temperature: 0 } : {}),
        });
    const res = await request(`${base}${infer ? '/v2/models/simple/infer' : '/v1/chat/completions'}`, {
      dispatcher: agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key.secret}` } : {}) },
      body,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    rec.status = res.statusCode;
    rec.server = header(res.headers['x-rr-server']);
    rec.cache = header(res.headers['x-herd-cache']);
    const text = await res.body.text();
    if (res.statusCode === 200) {
      if (infer) rec.complete = text.includes('"OUTPUT0"') && text.includes('"OUTPUT1"');
      else if (kind === 'stream') rec.complete = text.split('data: [DONE]').length === 2 && !/^data: \{"error"/m.test(text);
      else rec.complete = text.includes('"choices"');
    } else {
      [rec.errorCode, rec.message] = errorOf(text);
    }
  } catch (err) {
    const e = err as Error & { code?: string; cause?: { code?: string } };
    rec.errorCode = e.name === 'TimeoutError' ? 'timeout' : (e.code ?? e.cause?.code ?? e.name);
    rec.message = e.message.slice(0, 120);
  }
  rec.endedAt = Date.now();
  return rec;
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function errorOf(text: string): [string | undefined, string | undefined] {
  try {
    const e = (JSON.parse(text) as { error?: { code?: string; type?: string; message?: string } | string }).error;
    return typeof e === 'string' ? [e.slice(0, 60), undefined] : [e?.code ?? e?.type, e?.message?.slice(0, 120)];
  } catch {
    return [text.slice(0, 60).replace(/\s+/g, ' '), undefined];
  }
}

/** `concurrency` workers until stop() says so; markers count up from `firstMarker`. */
export async function runLoad(o: {
  agent: Agent;
  base: string;
  keys: readonly LoadKey[];
  concurrency: number;
  firstMarker: number;
  plainOnly?: boolean;
  stop: () => boolean;
}): Promise<LoadRequest[]> {
  const out: LoadRequest[] = [];
  let next = o.firstMarker;
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (!o.stop()) {
        const marker = next++;
        const plan = planOf(marker, o.keys, o.plainOnly === true);
        out.push(await send(o.agent, o.base, marker, plan.kind, plan.key));
      }
    }),
  );
  return out;
}
