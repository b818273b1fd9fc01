// Header and URL values as a span may carry them: credentials replaced, so no attribute ever holds a key,
// a token, a password or a signed query (docs/security.md: no secret in logs, errors, metrics or traces).

export const REDACTED = 'REDACTED';

/** Headers whose value is a credential however it is written. */
const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'x-herd-key',
  'x-amz-security-token',
  'ocp-apim-subscription-key',
]);
/** A header or query name that says what it holds: keys, tokens, secrets, passwords, signatures, sessions. */
const SECRET_NAME = /(?:^|[-_.])(?:key|apikey|token|secret|password|passwd|pwd|auth|credential|credentials|signature|sig|session)s?(?:$|[-_.])/i;

export const isSecretName = (name: string) => SECRET_HEADERS.has(name.toLowerCase()) || SECRET_NAME.test(name);

/** The value to record for header `name`: REDACTED for a credential, else the value. */
export function redactHeaderValue(name: string, value: string): string {
  return isSecretName(name) ? REDACTED : value;
}

/** `url` without user info, and with the values of credential-like query parameters replaced; unparseable: REDACTED. */
export function redactUrl(url: string): string {
  if (!URL.canParse(url)) return REDACTED;
  const u = new URL(url);
  if (u.username !== '' || u.password !== '') {
    u.username = REDACTED;
    u.password = '';
  }
  let changed = false;
  for (const name of [...u.searchParams.keys()]) {
    if (isSecretName(name)) {
      u.searchParams.set(name, REDACTED);
      changed = true;
    }
  }
  return changed || u.username !== '' ? u.toString() : url;
}

const URL_IN_TEXT = /\bhttps?:\/\/[^\s'"<>]+/g;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;

/** Free text (an error's message) with the URLs in it redacted and bearer or basic credentials replaced. */
export function redactText(text: string): string {
  if (!text.includes('://') && !text.includes('Bearer') && !text.includes('Basic')) return text;
  return text.replace(URL_IN_TEXT, (url) => redactUrl(url)).replace(BEARER, (_m, scheme: string) => `${scheme} ${REDACTED}`);
}
