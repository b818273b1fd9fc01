// GET /v1/models for Anthropic clients: Anthropic's list shape, errors in Anthropic's shape. The Messages
// POST routes are in the exchanges' table (gateway-exchanges.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HerdError } from '../core/errors.ts';
import { convertModelsToMessagesList } from '../gateway/ingress/anthropic-messages/convert-models-to-messages-list.ts';
import { resolveAnthropicAuthorization } from './dialect-edge.ts';
import { mapErrorToAnthropic } from './map-anthropic-error.ts';
import type { OpenAIDeps } from './openai-deps.ts';
import { clientAddressOf } from './resolve-client-address.ts';

/** A request from an Anthropic client (its SDKs always send anthropic-version; Claude Code sends x-api-key). */
export function isAnthropicClient(headers: FastifyRequest['headers']): boolean {
  return headers['anthropic-version'] !== undefined || headers['x-api-key'] !== undefined;
}

/** GET /v1/models for an Anthropic client: the same models the key may use, in Anthropic's list shape. */
export async function sendAnthropicModelList(deps: OpenAIDeps, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const auth = deps.authenticator.authenticate(resolveAnthropicAuthorization(req.headers), clientAddressOf(req.raw));
  if (auth instanceof HerdError) return sendAnthropicError(reply, auth);
  const models = await deps.gateway.listModels((model) => !deps.authenticator.authorizeModel(auth.key, model));
  return reply
    .code(200)
    .header('content-type', 'application/json')
    .send(JSON.stringify(convertModelsToMessagesList(models)));
}

function sendAnthropicError(reply: FastifyReply, error: HerdError): FastifyReply {
  const answer = mapErrorToAnthropic(error);
  return reply.code(answer.status).headers(answer.headers).header('content-type', 'application/json').send(JSON.stringify(answer.body));
}
