// The in-process feed of gateway requests finishing on this replica: the ledger's record() publishes
// here first, so the console's live tail, its traffic figures and request details see a request before the ledger's batched flush.
import type { AttemptRow, Ledger, RequestDetail, RequestRecord } from './ledger.ts';

export type RequestListener = (request: RequestRecord, attempts: readonly AttemptRow[]) => void;

export interface RequestFeedOptions {
  /** How many finished requests recent() keeps (default 2,000). */
  ringSize?: number;
  /** A listener threw: it is told here, and the others (and the ledger write) go on. */
  onError?: (error: unknown) => void;
}

const DEFAULT_RING = 2_000;

export class RequestFeed {
  private readonly size: number;
  private readonly ring: (RequestDetail | undefined)[];
  /** Request id → its slot in the ring. */
  private readonly slots = new Map<string, number>();
  private next = 0;
  private listeners: RequestListener[] = [];
  private readonly onError: ((error: unknown) => void) | undefined;

  constructor(options: RequestFeedOptions = {}) {
    this.size = Math.max(1, options.ringSize ?? DEFAULT_RING);
    this.ring = new Array<RequestDetail | undefined>(this.size);
    this.onError = options.onError;
  }

  /** One finished request: kept in the ring, handed to every listener synchronously. */
  publish(request: RequestRecord, attempts: readonly AttemptRow[]): void {
    const slot = this.next;
    const old = this.ring[slot];
    if (old !== undefined && this.slots.get(old.request.requestId) === slot) this.slots.delete(old.request.requestId);
    // Kept as given: the billing service builds fresh rows per request and never changes them afterwards.
    this.ring[slot] = { request, attempts: attempts as AttemptRow[] };
    this.slots.set(request.requestId, slot);
    this.next = (slot + 1) % this.size;
    // A plain loop over a copy-on-write array: the common case (one listener, the traffic counter) costs one call.
    for (const listener of this.listeners) {
      try {
        listener(request, attempts);
      } catch (err) {
        this.onError?.(err);
      }
    }
  }

  /** Adds a listener; the returned function removes it (idempotent). */
  subscribe(listener: RequestListener): () => void {
    this.listeners = [...this.listeners, listener];
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** A request among the last ringSize published, with its attempts; undefined otherwise. */
  recent(requestId: string): RequestDetail | undefined {
    const slot = this.slots.get(requestId);
    return slot === undefined ? undefined : this.ring[slot];
  }

  get listenerCount(): number {
    return this.listeners.length;
  }
}

/** The ledger with record() publishing to the feed first (the one place every finished gateway request passes). */
export function publishingLedger(ledger: Ledger, feed: RequestFeed): Ledger {
  const wrapped: Ledger = {
    kind: ledger.kind,
    reserve: (input) => ledger.reserve(input),
    settle: (requestId, actual) => ledger.settle(requestId, actual),
    settlePart: (reservationId, lineRequestId, costMicros, atMs) => ledger.settlePart(reservationId, lineRequestId, costMicros, atMs),
    release: (requestId) => ledger.release(requestId),
    recover: (options) => ledger.recover(options),
    budgetSpend: (lines) => ledger.budgetSpend(lines),
    spend: (keyId, atMs) => ledger.spend(keyId, atMs),
    record: (request, attempts) => {
      feed.publish(request, attempts);
      return ledger.record(request, attempts);
    },
    flush: () => ledger.flush(),
    usage: (query) => ledger.usage(query),
    usagePage: (query) => ledger.usagePage(query),
    spendTotals: (sinceMs, untilMs) => ledger.spendTotals(sinceMs, untilMs),
    listRequests: (query) => ledger.listRequests(query),
    getRequest: (requestId) => ledger.getRequest(requestId),
    stats: () => ledger.stats(),
    close: () => ledger.close(),
  };
  if (ledger.intend) wrapped.intend = ledger.intend.bind(ledger);
  if (ledger.alertOutbox) wrapped.alertOutbox = ledger.alertOutbox.bind(ledger);
  return wrapped;
}
