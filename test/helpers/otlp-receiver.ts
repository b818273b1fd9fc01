// A local OTLP/HTTP collector for tests: POST /v1/traces with protobuf bodies decoded by protobufjs from the
// opentelemetry-proto definitions in test/fixtures/otlp/ (v1.11.0), or with OTLP JSON; spans kept flattened.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const PROTO_ROOT = fileURLToPath(new URL('../fixtures/otlp/', import.meta.url));

/** The OTLP message types, loaded once from the .proto files (imports resolved under test/fixtures/otlp/). */
export function loadOtlpTypes(): { request: protobuf.Type; response: protobuf.Type } {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (target.startsWith('/') ? target : `${PROTO_ROOT}${target}`);
  root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
  root.resolveAll();
  return {
    request: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
    response: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
  };
}

export type AnyValue = string | number | boolean | AnyValue[] | { [key: string]: AnyValue } | undefined;

export interface ReceivedEvent {
  name: string;
  timeUnixNano: bigint;
  attributes: Record<string, AnyValue>;
}

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root. */
  parentSpanId: string;
  traceState: string;
  name: string;
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client. */
  kind: number;
  flags: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Record<string, AnyValue>;
  droppedAttributesCount: number;
  events: ReceivedEvent[];
  status: { code: number; message: string };
  resource: Record<string, AnyValue>;
  scope: { name: string; version: string };
}

export interface ReceivedRequest {
  contentType: string;
  headers: IncomingMessage['headers'];
  bytes: Buffer;
}

/** What the receiver answers: a status (with Retry-After), or 'hang' (never answers: a stuck collector). */
export type ReceiverAnswer = { status: number; retryAfter?: string } | 'hang';

export interface OtlpReceiver {
  /** The traces URL, http://127.0.0.1:PORT/v1/traces. */
  url: string;
  spans: ReceivedSpan[];
  requests: ReceivedRequest[];
  /** The answer to each next request (shifted off), then `fallback`. */
  answers: ReceiverAnswer[];
  fallback: ReceiverAnswer;
  /** Resolves once `count` spans arrived. */
  waitForSpans(count: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const types = loadOtlpTypes();
  const waiters: { count: number; resolve: (spans: ReceivedSpan[]) => void }[] = [];
  const hanging = new Set<ServerResponse>();
  const receiver: OtlpReceiver = {
    url: '',
    spans: [],
    requests: [],
    answers: [],
    fallback: { status: 200 },
    waitForSpans: (count) =>
      new Promise((resolve) => {
        if (receiver.spans.length >= count) resolve(receiver.spans);
        else waiters.push({ count, resolve });
      }),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const answer = receiver.answers.shift() ?? receiver.fallback;
      if (answer === 'hang') return void hanging.add(res);
      const contentType = String(req.headers['content-type'] ?? '');
      const bytes = Buffer.concat(chunks);
      receiver.requests.push({ contentType, headers: req.headers, bytes });
      if (answer.status !== 200) {
        res.writeHead(answer.status, answer.retryAfter ? { 'retry-after': answer.retryAfter } : {}).end();
        return;
      }
      try {
        const decoded = contentType.startsWith('application/json') ? JSON.parse(bytes.toString('utf8')) : types.request.toObject(types.request.decode(bytes), { longs: String });
        receiver.spans.push(...flattenRequest(decoded));
      } catch (err) {
        return void res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
      }
      const json = contentType.startsWith('application/json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : types.response.encode(types.response.create({})).finish());
      for (const w of [...waiters]) {
        if (receiver.spans.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(receiver.spans);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  return receiver;
}

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);
/** Protobuf bytes (a Buffer) or OTLP JSON's hex string. */
const hex = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : Buffer.from(v as Uint8Array).toString('hex'));
const nanos = (v: unknown): bigint => BigInt((v as string | number | undefined) ?? 0);

/** An ExportTraceServiceRequest (protobufjs's toObject or OTLP JSON: the same camelCase names) as a flat span list. */
export function flattenRequest(request: Obj): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of list(request['resourceSpans'])) {
    const resource = convertAttributes((rs['resource'] as Obj | undefined)?.['attributes']);
    for (const ss of list(rs['scopeSpans'])) {
      const scope = (ss['scope'] as Obj | undefined) ?? {};
      for (const s of list(ss['spans'])) {
        const status = (s['status'] as Obj | undefined) ?? {};
        out.push({
          traceId: hex(s['traceId']),
          spanId: hex(s['spanId']),
          parentSpanId: hex(s['parentSpanId']),
          traceState: String(s['traceState'] ?? ''),
          name: String(s['name'] ?? ''),
          kind: Number(s['kind'] ?? 0),
          flags: Number(s['flags'] ?? 0),
          startTimeUnixNano: nanos(s['startTimeUnixNano']),
          endTimeUnixNano: nanos(s['endTimeUnixNano']),
          attributes: convertAttributes(s['attributes']),
          droppedAttributesCount: Number(s['droppedAttributesCount'] ?? 0),
          events: list(s['events']).map((e) => ({ name: String(e['name'] ?? ''), timeUnixNano: nanos(e['timeUnixNano']), attributes: convertAttributes(e['attributes']) })),
          status: { code: Number(status['code'] ?? 0), message: String(status['message'] ?? '') },
          resource,
          scope: { name: String(scope['name'] ?? ''), version: String(scope['version'] ?? '') },
        });
      }
    }
  }
  return out;
}

function convertAttributes(v: unknown): Record<string, AnyValue> {
  const out: Record<string, AnyValue> = {};
  for (const kv of list(v)) out[String(kv['key'])] = convertAnyValue(kv['value'] as Obj | undefined);
  return out;
}

function convertAnyValue(v: Obj | undefined): AnyValue {
  if (v === undefined) return undefined;
  if ('stringValue' in v) return String(v['stringValue']);
  if ('boolValue' in v) return Boolean(v['boolValue']);
  if ('intValue' in v) return Number(v['intValue']);
  if ('doubleValue' in v) return Number(v['doubleValue']);
  if ('arrayValue' in v) return list((v['arrayValue'] as Obj)['values']).map((item) => convertAnyValue(item));
  if ('kvlistValue' in v) return convertAttributes((v['kvlistValue'] as Obj)['values']);
  if ('bytesValue' in v) return hex(v['bytesValue']);
  return undefined;
}
