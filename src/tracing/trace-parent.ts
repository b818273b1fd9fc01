// W3C Trace Context (https://www.w3.org/TR/trace-context/): the traceparent and tracestate values a request
// carries in, parsed strictly, and the ones Herd sends on each upstream request.

/** A span context: a parent handed down in process (remote false) or parsed from a request (remote true). */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  readonly spanId: string;
  readonly sampled: boolean;
  /** The tracestate list as received (validated), or undefined. */
  readonly traceState: string | undefined;
  readonly remote: boolean;
}

const ZERO_TRACE_ID = '00000000000000000000000000000000';
const ZERO_SPAN_ID = '0000000000000000';

/** The context of a span that records nothing (tracing off): never sent upstream, never a parent. */
export const NO_TRACE_PARENT: TraceParent = Object.freeze({ traceId: ZERO_TRACE_ID, spanId: ZERO_SPAN_ID, sampled: false, traceState: undefined, remote: false });

export const isValidTraceParent = (parent: TraceParent | undefined): parent is TraceParent =>
  parent !== undefined && parent.traceId !== ZERO_TRACE_ID && parent.spanId !== ZERO_SPAN_ID;

/** Version 00's exact shape; a later version may add fields after a dash (the spec's forward compatibility). */
const TRACEPARENT_HEAD = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})/;

/**
 * A traceparent value, or undefined when it is not one: uppercase hex, version ff, all-zero ids, a wrong
 * length for version 00, or a later version whose extra fields are not set off by a dash. A version above 00
 * is read as 00 reads it (its first four fields), as the spec tells a version-00 parser to do.
 */
export function parseTraceParent(value: string | undefined): Omit<TraceParent, 'traceState'> | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  const m = TRACEPARENT_HEAD.exec(text);
  if (m === null) return undefined;
  const [, version, traceId, spanId, flags] = m as unknown as [string, string, string, string, string];
  if (version === 'ff') return undefined;
  if (version === '00' ? text.length !== 55 : text.length > 55 && text[55] !== '-') return undefined;
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return undefined;
  // Only the sampled bit is defined; other bits are ignored (and never sent on).
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1, remote: true };
}

const SIMPLE_KEY = /^[a-z0-9][_0-9a-z\-*/]{0,255}$/;
const TENANT_KEY = /^[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13}$/;
// Printable ASCII but ',' and '=', up to 256 characters, not ending in a space.
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const MAX_MEMBERS = 32;

/** A tracestate list (several header values joined), normalised, or undefined when any member is invalid. */
export function parseTraceState(values: string | readonly string[] | undefined): string | undefined {
  if (values === undefined) return undefined;
  const joined = typeof values === 'string' ? values : values.join(',');
  const members: string[] = [];
  const keys = new Set<string>();
  for (const raw of joined.split(',')) {
    const member = raw.trim();
    if (member === '') continue;
    const eq = member.indexOf('=');
    if (eq <= 0) return undefined;
    const key = member.slice(0, eq);
    const value = member.slice(eq + 1);
    if (!(SIMPLE_KEY.test(key) || TENANT_KEY.test(key)) || !VALUE.test(value) || keys.has(key)) return undefined;
    keys.add(key);
    members.push(member);
  }
  if (members.length === 0 || members.length > MAX_MEMBERS) return undefined;
  return members.join(',');
}

/**
 * The parent a request names: its traceparent (exactly one value) and, when that is valid, its tracestate.
 * Header values as Node's IncomingHttpHeaders or gRPC metadata give them (several values: a list).
 */
export function extractTraceParent(traceparent: string | readonly string[] | undefined, tracestate: string | readonly string[] | undefined): TraceParent | undefined {
  const one = typeof traceparent === 'string' ? traceparent : traceparent?.length === 1 ? traceparent[0] : undefined;
  const parsed = parseTraceParent(one);
  if (parsed === undefined) return undefined;
  return { ...parsed, traceState: parseTraceState(tracestate) };
}

/** An HTTP request's parent: `headers` as node:http gives them (lowercase names). */
export const extractFromHeaders = (headers: Readonly<Record<string, string | readonly string[] | undefined>>): TraceParent | undefined =>
  extractTraceParent(headers['traceparent'], headers['tracestate']);

/** The version-00 traceparent of `parent`. */
export function formatTraceParent(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${parent.sampled ? '01' : '00'}`;
}

/** Adds traceparent (and tracestate) for `parent` to an upstream request's headers; nothing for no parent or tracing off. */
export function inject(parent: TraceParent | undefined, headers: Record<string, string>): void {
  if (!isValidTraceParent(parent)) return;
  headers['traceparent'] = formatTraceParent(parent);
  if (parent.traceState !== undefined) headers['tracestate'] = parent.traceState;
}
