// Who pays for a KServe HTTP request to a model that spends (an llm model, an ensemble with one): the
// key from `Authorization: Bearer` or `x-api-key`, admitted by the gateway's chat port before any work.
import type { IncomingMessage } from 'node:http';
import type { ChatCaller, ChatCallerGate } from '../core/chat-port.ts';
import { HerdError } from '../core/errors.ts';
import { readCallerKey } from '../gateway/flow/serving-principals.ts';
import type { LoadedModel } from '../serving/repository/loaded-model.ts';
import { clientAddressOf } from './resolve-client-address.ts';

export type CallerGate = ChatCallerGate;

/**
 * The caller for a request to `model`, or undefined for a model that does not spend (one property read:
 * local models pay nothing for this). Throws the refusal (UNAUTHENTICATED, RATE_LIMITED).
 */
export function admitKserveCaller(gate: CallerGate | undefined, model: LoadedModel, req: IncomingMessage): ChatCaller | undefined {
  const spending = model.spending;
  if (spending === undefined || gate === undefined) return undefined;
  // Read only here: the peer's address is a getter over the socket, not free on every local model's request.
  const headers = req.headers;
  const apiKey = readCallerKey(single(headers['authorization']), single(headers['x-api-key']));
  // The address /v1 uses too: the peer's, or behind a trusted proxy the hop it names.
  const client = clientAddressOf(req);
  const admitted = gate.admit({ apiKey, remoteAddress: client.address, forwardedByUntrustedPeer: client.forwardedByUntrustedPeer === true }, spending);
  if (admitted instanceof HerdError) throw admitted;
  return admitted;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
