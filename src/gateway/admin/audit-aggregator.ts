// Folds frequent audit events (admin sign-ins, refused requests) into one row per (actor or source
// address, action, object) per minute with a `count`, so a flood cannot grow audit_events without bound.
import type { AuditEventInput, ChangeContext, KeyStore } from '../keys/key-store.ts';

export interface AuditAggregatorOptions {
  store: Pick<KeyStore, 'appendAudit'>;
  /** Distinct (who, action, object) held per minute at most; past it events fold into one row per action. */
  maxEntries?: number;
  /** A write failed (the rows are lost: the audit of a refusal must never fail the request). */
  onError?: (error: unknown) => void;
  /** Wall clock, epoch ms (tests pin it). */
  now?: () => number;
  /** false: no timer (tests call flush); the minute's rows are still written by the next record() or close(). */
  timer?: boolean;
}

interface Pending {
  event: AuditEventInput;
  ctx: ChangeContext;
  count: number;
  firstAt: number;
  lastAt: number;
}

const MINUTE_MS = 60_000;
/** Actors that name nobody: the source address tells such events apart. */
const NAMELESS = new Set(['anonymous', 'unknown', '']);

export class AuditAggregator {
  private readonly store: Pick<KeyStore, 'appendAudit'>;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly onError: (error: unknown) => void;
  private readonly useTimer: boolean;
  private pending = new Map<string, Pending>();
  private minute = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(options: AuditAggregatorOptions) {
    this.store = options.store;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
    this.onError = options.onError ?? (() => undefined);
    this.useTimer = options.timer ?? true;
  }

  /** Counts one event; written at the end of its minute (or at close). Never throws. */
  record(event: AuditEventInput, ctx: ChangeContext): void {
    if (this.closed) return;
    const at = this.now();
    const minute = Math.floor(at / MINUTE_MS);
    if (minute !== this.minute) {
      if (this.pending.size > 0) void this.flush();
      this.minute = minute;
    }
    const who = NAMELESS.has(ctx.actor.id) ? `ip:${ctx.sourceIp ?? '?'}` : ctx.actor.id;
    let id = `${who}\u0000${event.action}\u0000${event.object}`;
    let entry = this.pending.get(id);
    if (entry === undefined && this.pending.size >= this.maxEntries) {
      // Too many distinct sources in one minute: the rest of the minute counts in one row per action.
      id = `\u0000overflow\u0000${event.action}`;
      entry = this.pending.get(id);
      if (entry === undefined) {
        const overflow: Pending = { event: { action: event.action, object: '*' }, ctx: { actor: { id: 'many', name: 'many sources', role: 'client' } }, count: 0, firstAt: at, lastAt: at };
        this.pending.set(id, overflow);
        entry = overflow;
      }
    }
    if (entry === undefined) {
      entry = { event, ctx, count: 0, firstAt: at, lastAt: at };
      this.pending.set(id, entry);
    }
    entry.count += 1;
    entry.lastAt = at;
    this.schedule(minute);
  }

  /** Writes every row held now; resolves when they are written (or failed, reported to onError). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    if (rows.length === 0) return this.writing;
    // One write at a time, in order: the chain's rows follow the minutes.
    this.writing = this.writing.then(() => this.write(rows));
    return this.writing;
  }

  /** Writes what is held and stops counting. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private async write(rows: readonly Pending[]): Promise<void> {
    for (const row of rows) {
      const event: AuditEventInput = {
        ...row.event,
        count: row.count,
        after: { ...(isRecord(row.event.after) ? row.event.after : {}), first_at: new Date(row.firstAt).toISOString(), last_at: new Date(row.lastAt).toISOString() },
      };
      try {
        await this.store.appendAudit([event], row.ctx);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  private schedule(minute: number): void {
    if (!this.useTimer || this.timer !== undefined) return;
    const wait = Math.max(0, (minute + 1) * MINUTE_MS - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, wait);
    // Held rows must not keep a finished process alive; close() writes them.
    this.timer.unref();
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
