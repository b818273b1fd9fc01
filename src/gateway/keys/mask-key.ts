// How a presented key appears in an error message. OpenAI shows the start and the last four
// characters ("Incorrect API key provided: sk-abcde****wxyz."); Herd does the same for its own
// keys (`sk-herd-ab****wxyz`), with a fixed run of stars (a wrong key's length is nobody's
// business). Any other token may be a mistyped master key or another vendor's secret, so only 4
// characters of its start are shown, and nothing at all of a short one (more likely a password).
import { KEY_PREFIX, looksLikeKeySecret } from './create-key-secret.ts';

const SHOWN_END = 4;
const SHOWN_START_FOREIGN = 4;
const SHOWN_RANDOM_START = 2;
const MIN_LENGTH_TO_SHOW = 24;

export function maskKey(token: string): string {
  if (token.length < MIN_LENGTH_TO_SHOW) return '****';
  const start = token.startsWith(KEY_PREFIX) ? KEY_PREFIX.length + SHOWN_RANDOM_START : SHOWN_START_FOREIGN;
  return `${printable(token.slice(0, start))}****${printable(token.slice(-SHOWN_END))}`;
}

/** Anything outside printable ASCII becomes '?' so a hostile header cannot forge log lines. */
function printable(text: string): string {
  return text.replace(/[^\x21-\x7e]/g, '?');
}

/** Quotes a client-supplied value (a model name, a revoke argument) for an error message: masked
 *  when longer than a display prefix and shaped like a Herd key (people paste keys into the wrong
 *  field), cut when long. A display prefix itself is not secret and is shown as given. */
export function quoteUntrusted(text: string): string {
  if (looksLikeKeySecret(text)) return `'${maskKey(text)}'`;
  const cut = text.length > 100 ? `${text.slice(0, 100)}…` : text;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is this line's job
  return `'${cut.replace(/[\u0000-\u001f\u007f]/g, '?')}'`;
}
