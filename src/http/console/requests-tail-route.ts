// GET /admin/v1/requests/tail: the console's live request feed as Server-Sent Events, fed in-process by the
// RequestFeed; batched per flush, rate-capped and bounded per client (a slow reader is told and closed), capped per
// replica, subscribed only while a tail is open.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HerdError } from '../../core/errors.ts';
import { requireAccess } from '../../gateway/admin/admin-roles.ts';
import { convertRequestToJson } from '../../gateway/admin/convert-console-json.ts';
import type { AttemptRow, RequestRecord } from '../../gateway/billing/ledger.ts';
import type { RequestFeed } from '../../gateway/billing/request-feed.ts';
import type { ChangeContext } from '../../gateway/keys/key-store.ts';
import { type AdminRouteSpec, defineAdminRoute } from '../admin-route-spec.ts';
import { tailQuery, tailStream } from '../admin-console-schemas.ts';

export interface TailLimits {
  /** Open tails per replica (default 20): one more is 429. */
  maxTails?: number;
  /** Events waiting for a slow reader (default 256): one more and the tail is dropped. */
  maxBuffered?: number;
  /** Comment lines that keep proxies from closing a quiet stream (default 15 s). */
  heartbeatMs?: number;
  /** How long a dropped reader's last bytes may wait before the socket is destroyed (default 30 s). */
  dropGraceMs?: number;
  /** Events per second per tail (default 50); the rest of the second is counted in an `event: skipped`. */
  maxEventsPerSecond?: number;
  /** Events are written in one batch per tail this often (default 100 ms). */
  flushMs?: number;
}

export interface TailFilter {
  key?: string | undefined;
  model?: string | undefined;
  status?: string | undefined;
  dialect?: string | undefined;
}

interface Tail {
  owners: readonly string[];
  filter: TailFilter;
  res: ServerResponse;
  /** Events since the last flush. */
  batch: string[];
  /** Events waiting for the socket to drain. */
  queue: string[];
  waiting: boolean;
  /** Events sent in the current second, and those left out over the rate since the last flush. */
  sentThisSecond: number;
  skipped: number;
  heartbeat: NodeJS.Timeout;
}

const DROPPED = 'event: dropped\ndata: {"reason":"slow"}\n\n';
const CLOSED = 'event: closed\ndata: {"reason":"signed_out"}\n\n';

/** Every replica's tails in this process, so a sign-out can close its own wherever they were opened. */
const registries = new Set<RequestTails>();

/**
 * Closes every open tail whose session or actor (key id) is `id`, in every server of this process; returns
 * how many. The console's sign-out (and a session's expiry) calls it.
 */
export function closeTailsOf(id: string): number {
  let closed = 0;
  for (const tails of registries) closed += tails.closeTailsOf(id);
  return closed;
}

export class RequestTails {
  private readonly feed: RequestFeed;
  private readonly maxTails: number;
  private readonly maxBuffered: number;
  private readonly heartbeatMs: number;
  private readonly dropGraceMs: number;
  private readonly maxPerSecond: number;
  private readonly flushMs: number;
  private readonly tails = new Set<Tail>();
  private unsubscribe: (() => void) | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private second = 0;

  constructor(feed: RequestFeed, limits: TailLimits = {}) {
    this.feed = feed;
    this.maxTails = limits.maxTails ?? 20;
    this.maxBuffered = limits.maxBuffered ?? 256;
    this.heartbeatMs = limits.heartbeatMs ?? 15_000;
    this.dropGraceMs = limits.dropGraceMs ?? 30_000;
    this.maxPerSecond = limits.maxEventsPerSecond ?? 50;
    this.flushMs = limits.flushMs ?? 100;
    registries.add(this);
  }

  get size(): number {
    return this.tails.size;
  }

  /** Refuses a tail beyond the replica's cap (before the stream starts, so the answer is a plain 429). */
  admit(): void {
    if (this.tails.size >= this.maxTails) {
      throw new HerdError('RATE_LIMITED', `This replica already serves ${this.maxTails} live request tails: close one (another console tab) and retry.`, {
        retryAfterSeconds: 5,
      });
    }
  }

  open(_req: IncomingMessage, res: ServerResponse, owners: readonly string[], filter: TailFilter): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // nginx would otherwise buffer the stream.
      'x-accel-buffering': 'no',
    });
    res.write(': tail open\n\n');
    const tail: Tail = {
      owners,
      filter,
      res,
      batch: [],
      queue: [],
      waiting: false,
      sentThisSecond: 0,
      skipped: 0,
      heartbeat: setInterval(() => this.ping(tail), this.heartbeatMs),
    };
    tail.heartbeat.unref();
    this.tails.add(tail);
    if (!this.unsubscribe) this.unsubscribe = this.feed.subscribe((request, attempts) => this.deliver(request, attempts));
    // The response's close, not the request's: a request's 'close' fires once its (empty) body is read.
    res.once('close', () => this.remove(tail));
  }

  closeTailsOf(id: string): number {
    let closed = 0;
    for (const tail of this.tails) {
      if (!tail.owners.includes(id)) continue;
      tail.res.end(CLOSED);
      this.remove(tail);
      closed += 1;
    }
    return closed;
  }

  /** The server is closing: every stream ends now (an open stream would hold close() forever). */
  closeAll(): void {
    for (const tail of this.tails) {
      tail.res.end();
      this.remove(tail);
    }
    registries.delete(this);
  }

  private deliver(request: RequestRecord, _attempts: readonly AttemptRow[]): void {
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.second) {
      this.second = second;
      for (const tail of this.tails) tail.sentThisSecond = 0;
    }
    // Serialised once for every tail that takes it, and only while some tail is under its rate.
    let event: string | undefined;
    let touched = false;
    for (const tail of this.tails) {
      if (!matches(tail.filter, request)) continue;
      touched = true;
      if (tail.sentThisSecond >= this.maxPerSecond) {
        tail.skipped += 1;
        continue;
      }
      tail.sentThisSecond += 1;
      event ??= `event: request\ndata: ${JSON.stringify(convertRequestToJson(request))}\n\n`;
      tail.batch.push(event);
    }
    if (touched && this.flushTimer === undefined) {
      this.flushTimer = setTimeout(() => this.flush(), this.flushMs);
      this.flushTimer.unref();
    }
  }

  /** One write per tail per flush interval: a busy replica does not pay a socket write per request per console. */
  private flush(): void {
    this.flushTimer = undefined;
    for (const tail of this.tails) {
      if (tail.skipped > 0) {
        tail.batch.push(`event: skipped\ndata: {"count":${tail.skipped}}\n\n`);
        tail.skipped = 0;
      }
      if (tail.batch.length === 0) continue;
      const events = tail.batch;
      tail.batch = [];
      this.send(tail, events);
    }
  }

  private send(tail: Tail, events: string[]): void {
    if (tail.waiting) {
      if (tail.queue.length + events.length <= this.maxBuffered) {
        tail.queue.push(...events);
        return;
      }
      // A reader this far behind would see a gap anyway: tell it, and let it reconnect from the list.
      tail.res.end(DROPPED);
      setTimeout(() => tail.res.destroy(), this.dropGraceMs).unref();
      this.remove(tail);
      return;
    }
    if (!tail.res.write(events.length === 1 ? (events[0] as string) : events.join(''))) this.wait(tail);
  }

  private wait(tail: Tail): void {
    tail.waiting = true;
    tail.res.once('drain', () => {
      tail.waiting = false;
      if (tail.queue.length === 0 || !this.tails.has(tail)) return;
      const text = tail.queue.join('');
      tail.queue = [];
      if (!tail.res.write(text)) this.wait(tail);
    });
  }

  private ping(tail: Tail): void {
    // A reader that is behind needs no keep-alive: bytes are waiting for it already.
    if (!tail.waiting && !tail.res.write(': ping\n\n')) this.wait(tail);
  }

  private remove(tail: Tail): void {
    if (!this.tails.delete(tail)) return;
    clearInterval(tail.heartbeat);
    tail.queue = [];
    tail.batch = [];
    // No tail, no listener: a finished request then costs the feed nothing here.
    if (this.tails.size === 0) {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
  }
}

function matches(filter: TailFilter, r: RequestRecord): boolean {
  if (filter.key !== undefined && r.keyId !== filter.key) return false;
  if (filter.model !== undefined && r.model !== filter.model && r.requestedModel !== filter.model) return false;
  if (filter.dialect !== undefined && (r.dialect ?? 'openai-chat') !== filter.dialect) return false;
  if (filter.status === undefined) return true;
  if (filter.status === 'error') return r.status !== 'ok';
  return r.status === filter.status;
}

/** Who a tail belongs to: its key, and its console session when the sign-in carried one. */
function ownersOf(ctx: ChangeContext): string[] {
  return ctx.sessionId === undefined ? [ctx.actor.id] : [ctx.actor.id, ctx.sessionId];
}

/** The route, over this replica's tails (absent: the gateway runs without the console's feed). */
export function createRequestsTailRoute(tails: () => RequestTails | undefined): AdminRouteSpec {
  return defineAdminRoute({
    method: 'GET',
    path: '/admin/v1/requests/tail',
    operationId: 'tailRequests',
    summary: 'Live feed of gateway requests finishing on this replica (Server-Sent Events), filtered by key, model, status, dialect',
    query: tailQuery,
    response: tailStream,
    contentType: 'text/event-stream',
    handle: async ({ ctx, query }) => {
      requireAccess(ctx.actor, 'read', 'tailing requests');
      const live = tails();
      if (!live) throw new HerdError('NOT_FOUND', 'The live request tail is not available on this server.');
      live.admit();
      const filter: TailFilter = { key: query.key, model: query.model, status: query.status, dialect: query.dialect };
      return { status: 200, body: null, takeOver: (req, res) => live.open(req, res, ownersOf(ctx), filter) };
    },
  });
}
