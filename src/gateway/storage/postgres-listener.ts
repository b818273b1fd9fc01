// LISTEN on one dedicated PostgreSQL connection (a notification reaches only the connection that listens), reconnecting
// after a drop; the user re-reads on every (re)connect, since notifications sent meanwhile are lost.
import pg from 'pg';

export interface PostgresListenerOptions {
  url: string;
  channel: string;
  onNotify: (payload: string) => void;
  /** After the first connect and after every reconnect. */
  onConnected: () => void;
  onError?: (error: unknown) => void;
  connectTimeoutMs?: number;
  /** Wait before a reconnect, doubling up to maxRetryMs (defaults 250 ms, 5 s). */
  retryMs?: number;
  maxRetryMs?: number;
}

export class PostgresListener {
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;

  constructor(private readonly options: PostgresListenerOptions) {}

  /** The first connection; resolves either way (a failure is retried in the background and reported). */
  async start(): Promise<void> {
    await this.connect();
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.options.url, connectionTimeoutMillis: this.options.connectTimeoutMs ?? 2000, keepAlive: true });
    let dropped = false;
    const drop = (err?: unknown) => {
      if (dropped) return;
      dropped = true;
      if (err !== undefined) this.options.onError?.(err);
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      this.scheduleReconnect();
    };
    client.on('error', drop);
    client.on('end', () => drop());
    client.on('notification', (message) => {
      if (message.channel === this.options.channel) this.options.onNotify(message.payload ?? '');
    });
    try {
      await client.connect();
      // The channel is a constant identifier chosen by the caller, never user input.
      await client.query(`LISTEN ${this.options.channel}`);
    } catch (err) {
      drop(err);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.failures = 0;
    this.options.onConnected();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.timer !== undefined) return;
    const base = this.options.retryMs ?? 250;
    const wait = Math.min(this.options.maxRetryMs ?? 5000, base * 2 ** this.failures++);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, wait);
    this.timer.unref();
  }
}
