// The console overview's traffic figures: the last 60 s of gateway requests finishing on this replica,
// in 1 s buckets (count, errors, a log-scale latency histogram), fed by the RequestFeed.
import type { RequestRecord } from './ledger.ts';
import type { RequestFeed } from './request-feed.ts';

const WINDOW_SECS = 60;
const SERIES_BUCKET_SECS = 5;
/** Latency bins grow by 10 %: p50/p99 are read to within 5 % without keeping every latency. */
const BIN_RATIO = 1.1;
const BINS = 150;
const LOG_RATIO = Math.log(BIN_RATIO);

export interface TrafficJson {
  window_secs: number;
  requests_per_sec: number;
  errors_per_sec: number;
  p50_ms: number | null;
  p99_ms: number | null;
  /** Oldest first: 12 buckets of 5 s, `t` the bucket's start (epoch s). */
  series: { t: number; requests: number; errors: number }[];
}

interface Bucket {
  /** The epoch second this bucket holds; -1: empty. */
  second: number;
  requests: number;
  errors: number;
  bins: Uint32Array;
}

export class RecentTraffic {
  private readonly buckets: Bucket[];
  private readonly now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
    this.buckets = Array.from({ length: WINDOW_SECS }, () => ({ second: -1, requests: 0, errors: 0, bins: new Uint32Array(BINS) }));
  }

  /** Counts the feed's requests from now on; returns the unsubscribe. */
  attach(feed: RequestFeed): () => void {
    return feed.subscribe((request) => this.observe(request));
  }

  observe(request: Pick<RequestRecord, 'status' | 'latencyMs'>): void {
    const second = Math.floor(this.now() / 1000);
    const bucket = this.buckets[second % WINDOW_SECS] as Bucket;
    if (bucket.second !== second) {
      bucket.second = second;
      bucket.requests = 0;
      bucket.errors = 0;
      bucket.bins.fill(0);
    }
    bucket.requests += 1;
    if (request.status !== 'ok') bucket.errors += 1;
    const bin = binOf(request.latencyMs);
    bucket.bins[bin] = (bucket.bins[bin] ?? 0) + 1;
  }

  /** The last 60 whole seconds (the current one excluded: it is still filling). */
  snapshot(): TrafficJson {
    const current = Math.floor(this.now() / 1000);
    const first = current - WINDOW_SECS;
    const merged = new Uint32Array(BINS);
    const series: TrafficJson['series'] = [];
    for (let t = first; t < current; t += SERIES_BUCKET_SECS) series.push({ t, requests: 0, errors: 0 });
    let requests = 0;
    let errors = 0;
    for (const bucket of this.buckets) {
      if (bucket.second < first || bucket.second >= current) continue;
      requests += bucket.requests;
      errors += bucket.errors;
      const point = series[Math.floor((bucket.second - first) / SERIES_BUCKET_SECS)];
      if (point) {
        point.requests += bucket.requests;
        point.errors += bucket.errors;
      }
      for (let i = 0; i < BINS; i++) merged[i] = (merged[i] ?? 0) + (bucket.bins[i] ?? 0);
    }
    return {
      window_secs: WINDOW_SECS,
      requests_per_sec: round3(requests / WINDOW_SECS),
      errors_per_sec: round3(errors / WINDOW_SECS),
      p50_ms: quantile(merged, requests, 0.5),
      p99_ms: quantile(merged, requests, 0.99),
      series,
    };
  }
}

/** Bin 0 holds < 1 ms; bin i ≥ 1 holds [1.1^(i-1), 1.1^i) ms; the last bin everything above. */
function binOf(latencyMs: number): number {
  if (!(latencyMs >= 1)) return 0;
  return Math.min(BINS - 1, 1 + Math.floor(Math.log(latencyMs) / LOG_RATIO));
}

function quantile(bins: Uint32Array, total: number, q: number): number | null {
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < BINS; i++) {
    seen += bins[i] ?? 0;
    // The bin's geometric middle: within 5 % of any latency in it.
    if (seen >= rank) return i === 0 ? 0 : Math.round(BIN_RATIO ** (i - 0.5) * 10) / 10;
  }
  return null;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
