// The one parser of JSON request bodies on the gateway's routes (and the depth check KServe's JSON shares):
// an empty or malformed body, or one nested deeper than MAX_JSON_DEPTH, is the client's 400 before any
// upstream work. Why 128: docs/security.md, "JSON nesting depth".
import { HerdError } from '../core/errors.ts';

/** Arrays and objects inside each other, counted from the body's outermost value (1). */
export const MAX_JSON_DEPTH = 128;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Throws INVALID_ARG when the JSON text in `bytes[0, end)` nests deeper than `limit`. A linear scan of
 * the bytes (brackets inside strings do not count); it does not validate the JSON, JSON.parse does.
 */
export function checkJsonDepth(bytes: Uint8Array, end = bytes.length, limit = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < end; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) {
        throw new HerdError('INVALID_ARG', `The JSON body of your request nests deeper than ${limit} levels of arrays and objects, which the server refuses.`);
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
}

/** The request body as JSON: INVALID_ARG for an empty, malformed or too deeply nested one. */
export function parseJsonBody(body: Buffer | undefined): unknown {
  if (body === undefined || body.length === 0) {
    throw new HerdError('INVALID_ARG', 'We could not parse the JSON body of your request: the body is empty. A JSON object is expected.');
  }
  checkJsonDepth(body);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new HerdError('INVALID_ARG', `We could not parse the JSON body of your request (${(err as Error).message}). A JSON object is expected.`);
  }
}
