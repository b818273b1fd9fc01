// What the Settings page may show of one configuration value: secrets (by their key's name, a URL's password,
// a restricted-API header's value) become "••••"; `*_env` fields name a variable and are shown as written.
export const MASK = '••••';

/** A key's last word that makes its value a secret: `api_key`, `x-auth-token`, `client_secret`, `proxy-authorization`. */
const SECRET_LAST_WORDS: ReadonlySet<string> = new Set([
  'key',
  'apikey',
  'secret',
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'token',
  'authorization',
  'credential',
  'credentials',
  'cookie',
]);
/** Words that make a key secret wherever they stand in it (`password_hash`, `secret_value`). */
const SECRET_ANY_WORDS: ReadonlySet<string> = new Set(['secret', 'password', 'passwd', 'apikey', 'authorization', 'credential', 'credentials']);

/** Fields whose values are Triton's `<header>=<value>` (the value is the shared secret a caller must send). */
const HEADER_VALUE_FIELDS: ReadonlySet<string> = new Set(['server.restricted_api', 'server.http_restricted_api', 'server.grpc_restricted_protocol']);

/** `snake_case`, `kebab-case` and `camelCase` into lower-case words. */
function wordsOf(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

/**
 * `api_key`, `password`, `x-auth-token`, `helicone-auth`: but not `key_prefix`, `max_tokens`, `secret_env`,
 * nor `auth` alone (herd.yaml's section of that name holds no secret itself).
 */
export function looksSecretKey(key: string): boolean {
  const words = wordsOf(key);
  const last = words[words.length - 1];
  if (last === undefined || last === 'env') return false;
  if (last === 'auth' && words.length > 1) return true;
  return SECRET_LAST_WORDS.has(last) || words.some((w) => SECRET_ANY_WORDS.has(w));
}

/** `RELAY_TOKEN`, `PG_PASSWORD_PROD`, `HELICONE_AUTH`: any secret word anywhere, as variables are named freely. */
export function looksSecretVariable(name: string): boolean {
  return wordsOf(name).some((w) => SECRET_LAST_WORDS.has(w) || SECRET_ANY_WORDS.has(w) || w === 'auth');
}

function isUrl(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
}

/** Names an environment variable (`api_key_env`, `password_env`): the name is shown, the variable never read. */
export function namesVariable(key: string): boolean {
  return /(?:^|[_-])env$/i.test(key);
}

/**
 * `postgres://u:p@h/db` → `postgres://u:••••@h/db`, and secret-looking query parameters (`?password=`)
 * masked. The userinfo runs to the last `@`: a password with an unencoded `@` or `/` is masked whole
 * (and perhaps some of the host with it), never shown in part.
 */
export function maskUrlSecrets(text: string): string {
  let out = text;
  const userinfo = /^([a-z][a-z0-9+.-]*:\/\/)([^:@/?#]*):(.*)@([^@]*)$/is.exec(out);
  if (userinfo && userinfo[3] !== '') out = `${userinfo[1]}${userinfo[2]}:${MASK}@${userinfo[4]}`;
  if (isUrl(out) && out.includes('?')) {
    out = out.replace(/([?&])([^=&#]+)=([^&#]*)/g, (whole, sep: string, name: string) => (looksSecretKey(decodeName(name)) ? `${sep}${name}=${MASK}` : whole));
  }
  return out;
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** A webhook's path and query often hold its token (Slack, Feishu, Discord): only the origin is shown. */
function maskWebhookUrl(text: string): string {
  const match = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)(.*)$/is.exec(text);
  if (!match || match[2] === '' || match[2] === '/') return text;
  return `${match[1]}/${MASK}`;
}

/**
 * The value as the page may show it. `keys` are the string segments of its path (`['providers', 'p', 'headers',
 * 'x-api-key']`); `field` its dotted path without array indexes (`server.http_restricted_api`); `variables` the
 * `${NAME}`s substituted into it: a value from `${RELAY_TOKEN}` is a secret whatever key it was written under
 * (a URL keeps all but its password).
 */
export function maskConfigValue<T>(keys: readonly string[], field: string, value: T, variables: readonly string[] = []): T | string {
  const leaf = keys[keys.length - 1];
  if (leaf !== undefined && namesVariable(leaf)) return value;
  if (keys.some(looksSecretKey)) return MASK;
  if (variables.some(looksSecretVariable) && !(typeof value === 'string' && isUrl(value))) return MASK;
  const webhook = leaf !== undefined && /webhook/i.test(leaf);
  const headerValue = [...HEADER_VALUE_FIELDS].some((f) => field === f || field.startsWith(`${f}.`));
  const maskText = (text: string): string => {
    if (headerValue && text.includes('=')) return `${text.slice(0, text.indexOf('='))}=${MASK}`;
    const masked = maskUrlSecrets(text);
    return webhook ? maskWebhookUrl(masked) : masked;
  };
  if (typeof value === 'string') return maskText(value);
  if (Array.isArray(value)) return value.map((v: unknown) => (typeof v === 'string' ? maskText(v) : v)) as T;
  return value;
}
