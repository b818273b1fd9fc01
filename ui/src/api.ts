// Every call the console makes: relative URLs (so a proxy's path prefix holds), the session cookie, the
// CSRF header on mutating calls, errors turned into their message, and a 401 anywhere sends to sign-in.

export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

let csrfToken = '';
let onUnauthorized: () => void = () => {};

/** Set at sign-in (and cleared at sign-out): the header every mutating call carries. */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  /** Routes that create (keys, teams, rotations) require one; a fresh random id per user action. */
  idempotent?: boolean;
  /** /v1 and /v2 calls with the cookie need the CSRF header even on GET. */
  csrf?: boolean;
  /** The sign-in form handles its own 401 (a wrong key) instead of being sent back to itself. */
  ignoreUnauthorized?: boolean;
  signal?: AbortSignal;
}

/** Random hex from getRandomValues: crypto.randomUUID exists only in secure contexts (not plain http behind a proxy). */
export function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function headersFor(options: CallOptions): Record<string, string> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if ((method !== 'GET' || options.csrf) && csrfToken) headers['x-csrf-token'] = csrfToken;
  if (options.idempotent) headers['idempotency-key'] = randomId();
  return headers;
}

/** The words of an error answer: the admin/OpenAI shape `{error: {message}}`, KServe's `{error: "..."}`, or the text. */
export async function errorMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const json = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof json.error === 'string') return json.error;
    if (json.error && typeof json.error === 'object' && typeof (json.error as { message?: unknown }).message === 'string') return (json.error as { message: string }).message;
    if (typeof json.message === 'string') return json.message;
  } catch {
    // Not JSON: the text itself says what went wrong.
  }
  return text.trim() || `${response.status} ${response.statusText || 'error'}`;
}

/** Checks the status: a 401 ends the session (unless asked not to), any other failure throws its message. */
export async function check(response: Response, options: CallOptions = {}): Promise<Response> {
  if (response.ok) return response;
  const message = await errorMessage(response);
  if (response.status === 401 && !options.ignoreUnauthorized) onUnauthorized();
  throw new ApiError(response.status, message);
}

export async function send(url: string, options: CallOptions = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: options.method ?? 'GET',
      headers: headersFor(options),
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'same-origin',
      signal: options.signal,
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, `The server did not answer (${error instanceof Error ? error.message : String(error)}).`);
  }
  return check(response, options);
}

/** A JSON call; 204 answers give undefined. */
export async function api<T>(url: string, options: CallOptions = {}): Promise<T> {
  const response = await send(url, options);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** A query string from the set values only. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
