// Live load figures per deployment for the least-busy and lowest-latency strategies: requests in
// flight, and an exponentially weighted moving average of latency (separately for whole answers and
// for streams' time to first token, which are not comparable).

/** Weight of the newest sample: about the last ten requests dominate. */
const EWMA_ALPHA = 0.2;

export type LatencyKind = 'chat' | 'stream';

interface Entry {
  inFlight: number;
  chatMs: number | undefined;
  streamMs: number | undefined;
}

export interface DeploymentLoad {
  key: string;
  inFlight: number;
  /** EWMA of whole non-streamed answers, ms. */
  chatLatencyMs: number | undefined;
  /** EWMA of streams' time to first token, ms. */
  streamLatencyMs: number | undefined;
}

export class DeploymentStats {
  private readonly entries = new Map<string, Entry>();

  inFlight(key: string): number {
    return this.entries.get(key)?.inFlight ?? 0;
  }

  latencyMs(key: string, kind: LatencyKind): number | undefined {
    const entry = this.entries.get(key);
    return kind === 'chat' ? entry?.chatMs : entry?.streamMs;
  }

  begin(key: string): void {
    this.entry(key).inFlight++;
  }

  end(key: string): void {
    const entry = this.entry(key);
    entry.inFlight = Math.max(0, entry.inFlight - 1);
  }

  recordLatency(key: string, kind: LatencyKind, ms: number): void {
    const entry = this.entry(key);
    const previous = kind === 'chat' ? entry.chatMs : entry.streamMs;
    const next = previous === undefined ? ms : previous + EWMA_ALPHA * (ms - previous);
    if (kind === 'chat') entry.chatMs = next;
    else entry.streamMs = next;
  }

  snapshot(): DeploymentLoad[] {
    return [...this.entries].map(([key, e]) => ({ key, inFlight: e.inFlight, chatLatencyMs: e.chatMs, streamLatencyMs: e.streamMs }));
  }

  private entry(key: string): Entry {
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = { inFlight: 0, chatMs: undefined, streamMs: undefined };
      this.entries.set(key, entry);
    }
    return entry;
  }
}
