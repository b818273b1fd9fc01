// Who pays for a gRPC ModelInfer / ModelStreamInfer request to a model that spends: the key from metadata
// `authorization: Bearer <key>` or `x-api-key` (tritonclient's headers= sends them), admitted by the gateway.
import type { CallMetadata } from './grpc-call-metadata.ts';
import type { ChatCaller, ChatCallerGate } from '../core/chat-port.ts';
import { HerdError } from '../core/errors.ts';
import { readCallerKey } from '../gateway/flow/serving-principals.ts';
import type { LoadedModel } from '../serving/repository/loaded-model.ts';

/** The caller for a request to `model`, or undefined when it does not spend; throws the refusal. */
export function admitGrpcCaller(gate: ChatCallerGate | undefined, model: LoadedModel, metadata: CallMetadata, peer: string): ChatCaller | undefined {
  const spending = model.spending;
  if (spending === undefined || gate === undefined) return undefined;
  const apiKey = readCallerKey(readMetadata(metadata, 'authorization'), readMetadata(metadata, 'x-api-key'));
  const admitted = gate.admit({ apiKey, remoteAddress: peerAddress(peer) }, spending);
  if (admitted instanceof HerdError) throw admitted;
  return admitted;
}

/** A text metadata value (keys are lower-case on the wire), else undefined. */
export function readMetadata(metadata: CallMetadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value : undefined;
}

/** grpc-js peers read `ipv4:127.0.0.1:5000`, `ipv6:[::1]:5000` or `127.0.0.1:5000`; the address alone, else undefined. */
export function peerAddress(peer: string): string | undefined {
  const text = peer.replace(/^ipv[46]:/, '');
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) return bracketed[1];
  const plain = /^([^:]+)(?::\d+)?$/.exec(text);
  return plain ? plain[1] : undefined;
}
