// Starts the real Herd server (the same startHerd that `herd serve` uses) on a free port for a test.
import { resolve } from 'node:path';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { herdConfigSchema } from '../../src/config/herd-config-schema.ts';
import { TRITON_MODEL_REPOSITORY } from '../triton-testdata.ts';

export const TRITON_REPOSITORY = TRITON_MODEL_REPOSITORY;
export const EXAMPLE_REPOSITORY = resolve('examples/model_repository');

export interface TestServerOptions {
  repositories: string[];
  controlMode?: 'none' | 'poll' | 'explicit';
  loadModel?: string[];
  strictReadiness?: boolean;
  maxInputSize?: number;
  pollSecs?: number;
  backendConfig?: Record<string, Record<string, string>>;
  /** herd.yaml's serving.trace (as --trace-config sets it). */
  trace?: Record<string, unknown>;
  /** Receives the server's log lines (load warnings, internal errors). */
  log?: (line: string) => void;
}

export async function startTestServer(options: TestServerOptions): Promise<HerdServer> {
  const config = herdConfigSchema.parse({
    server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, metrics_port: 0, ...(options.maxInputSize ? { http_max_input_size: options.maxInputSize } : {}) },
    serving: {
      model_repository: options.repositories,
      model_control_mode: options.controlMode ?? 'none',
      load_model: options.loadModel ?? [],
      strict_readiness: options.strictReadiness ?? true,
      repository_poll_secs: options.pollSecs ?? 0,
      backend_config: options.backendConfig ?? {},
      ...(options.trace ? { trace: options.trace } : {}),
    },
  });
  return startHerd(config, options.log ? { log: options.log } : {});
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: Buffer;
  json: () => unknown;
}

/** One HTTP exchange with the raw body kept, so tests can check binary answers byte for byte. */
export async function request(url: string, init: RequestInit = {}): Promise<HttpAnswer> {
  const res = await fetch(url, init);
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body, json: () => JSON.parse(body.toString('utf8')) };
}

export function postJson(url: string, value: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return request(url, { method: 'POST', body: JSON.stringify(value), headers: { 'content-type': 'application/json', ...headers } });
}

/** A KServe binary-extension body: JSON header followed by the raw tensor bytes. */
export function binaryBody(header: unknown, ...sections: ArrayBufferView[]): { body: Buffer; headerLength: number } {
  const json = Buffer.from(JSON.stringify(header));
  const parts = sections.map((s) => Buffer.from(s.buffer, s.byteOffset, s.byteLength));
  return { body: Buffer.concat([json, ...parts]), headerLength: json.length };
}
