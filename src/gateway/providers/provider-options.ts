// What every provider factory takes: where the upstream is, how to authenticate, how long to wait.
import type { OpenAIExtraEndpoint } from '../../config/gateway-config-schema.ts';

export interface ProviderOptions {
  /** Configured provider name (`holysheep`, `openai`, ...). */
  name: string;
  baseUrl: string;
  apiKey: string;
  /** Extra headers sent on every request (e.g. an organisation id); auth headers are set by the provider. */
  headers?: Record<string, string>;
  /** Per-attempt timeout when the request sets none. Default 60 s. */
  timeoutMs?: number;
  /** Most sockets open to this upstream at once; default unbounded (the router's limits apply first). */
  connections?: number;
  /** OpenAI-compatible upstreams: the endpoints besides chat it offers, where same-dialect requests pass through. */
  endpoints?: readonly OpenAIExtraEndpoint[];
}

export const DEFAULT_TIMEOUT_MS = 60_000;
