// Herd's own failures while it builds or encodes an upstream request: they are the sender's (a body too
// deep to encode) or Herd's (a bug), never the upstream's, so no breaker, retry or health figure sees them.
import { HerdError, toHerdError } from '../../core/errors.ts';

/** The upstream body as JSON text; a body that cannot be encoded is a client or internal error, not an upstream failure. */
export function encodeUpstreamBody(body: unknown): string {
  try {
    return JSON.stringify(body);
  } catch (err) {
    throw describeBuildError(err);
  }
}

/**
 * A failure raised while Herd built a request for an upstream, as the error the client gets: nesting or
 * size beyond what Herd can encode (V8 raises RangeError for both) is the request's (INVALID_ARG, 400);
 * anything else is Herd's own (INTERNAL, 500). HerdErrors (a bridge refusing a field) pass as they are.
 */
export function describeBuildError(err: unknown): HerdError {
  if (err instanceof HerdError) return err;
  if (err instanceof RangeError) {
    return new HerdError('INVALID_ARG', 'The request is nested too deeply or is too large for Herd to encode it for the upstream.', { cause: err });
  }
  const error = toHerdError(err);
  return new HerdError('INTERNAL', `Herd could not build the upstream request: ${error.message}`, { cause: err });
}
