// Every gateway POST route without the framework: a body with a known length and no content coding goes
// straight to the route's exchange, looked up in the one table (gateway-exchanges.ts). Everything else
// (compressed or chunked bodies, oversized ones, shutdown, other methods) falls through to Fastify, whose
// route answers through the same exchange. Why: docs/decisions/framework-free-fast-paths.md.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayExchanges } from './gateway-exchanges.ts';
import { hasPlainBody, readBody } from './plain-body.ts';

export interface FastGatewayOptions {
  maxInputSize: number;
  isClosing: () => boolean;
}

/** Returns true when it took the request. */
export function createFastGatewayHandler(exchanges: GatewayExchanges, options: FastGatewayOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'POST' || options.isClosing()) return false;
    const route = exchanges.get(req.url ?? '');
    if (route === undefined || !hasPlainBody(req, options.maxInputSize)) return false;
    const started = performance.now();
    readBody(req, (body) => void route.exchange(req, res, body, started));
    return true;
  };
}
