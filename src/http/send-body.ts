// JSON answers serialised once, with the content type set, so handlers stay one line.
import type { FastifyReply } from 'fastify';

export function sendJson(reply: FastifyReply, status: number, value: unknown): FastifyReply {
  return reply.code(status).header('Content-Type', 'application/json').send(JSON.stringify(value));
}
