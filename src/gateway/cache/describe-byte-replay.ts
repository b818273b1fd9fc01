// Which stored upstream bytes a request may be answered with: the same dialect, the same mode (one JSON
// body or a stream), and the same "variant" — what else of the request shaped the bytes but is not part
// of the cache key because it does not change the answer (e.g. whether OpenAI chat's stream ends with a
// usage event). A request that differs in any of the three gets the canonical replay instead.
import { createHash } from 'node:crypto';
import type { ChatRequest } from '../protocol/chat-types.ts';
import type { JsonObject } from '../protocol/check-json-value.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import type { PassThrough } from '../providers/provider.ts';
import { stringifyCanonical } from './compute-cache-key.ts';

export type ByteMode = 'json' | 'stream';

export interface ByteReplayTarget {
  dialect: IngressDialect;
  mode: ByteMode;
  variant: string;
}

/**
 * What bytes this request could be answered with, or undefined: a caller without pass-through reads
 * canonical objects only, and a dialect without a description below and without the client's body
 * cannot say what its bytes depend on.
 */
export function describeByteReplay(passThrough: PassThrough | undefined, request: ChatRequest): ByteReplayTarget | undefined {
  if (passThrough === undefined) return undefined;
  const mode: ByteMode = request.stream === true ? 'stream' : 'json';
  const variant = describeVariant(passThrough.dialect, mode, request, passThrough.body);
  return variant === undefined ? undefined : { dialect: passThrough.dialect, mode, variant };
}

function describeVariant(dialect: IngressDialect, mode: ByteMode, request: ChatRequest, body: Readonly<JsonObject> | undefined): string | undefined {
  if (dialect === 'openai-chat') {
    if (mode === 'json') return '';
    // The usage event is in the stream only under include_usage; OpenAI writes `obfuscation` fields unless
    // include_obfuscation is false (absent means true).
    const options = request.stream_options;
    return stringifyCanonical({ include_usage: options?.include_usage === true, include_obfuscation: options?.include_obfuscation !== false });
  }
  // Dialects not described here yet: their bytes replay only to a request whose body is the same (model
  // and stream aside: the key and the mode cover them). Safe whatever the dialect echoes back.
  if (body === undefined) return undefined;
  const rest = { ...body, model: undefined, stream: undefined };
  return `body:${createHash('sha256').update(stringifyCanonical(rest)).digest('hex')}`;
}
