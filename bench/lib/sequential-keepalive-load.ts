// Sequential requests on one keep-alive socket with node:http's client, as a user's script sends them:
// each request waits for the previous answer, so the numbers are per-request latency with no queueing —
// time to the response headers, to the last byte, and Herd's own x-herd-overhead-ms when it sends one.
import { Agent, request as httpRequest } from 'node:http';

export interface SequentialResult {
  requests: number;
  headersP50us: number;
  headersP99us: number;
  totalP50us: number;
  totalP99us: number;
  /** Median of x-herd-overhead-ms in µs; undefined for targets that do not send it. */
  overheadP50us: number | undefined;
}

export interface SequentialOptions {
  origin: string;
  path: string;
  body: Buffer;
  headers: Record<string, string>;
  requests: number;
  /** Pause between one answer's end and the next request (diagnostic: work a server does after answering then stops counting). */
  gapMs?: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/** One socket for the whole run (maxSockets 1, keepAlive), like a single-threaded client. */
export function createSequentialClient(origin: string): { agent: Agent; url: URL } {
  return { agent: new Agent({ keepAlive: true, maxSockets: 1 }), url: new URL(origin) };
}

export async function runSequential(options: SequentialOptions, agent: Agent): Promise<SequentialResult> {
  const url = new URL(options.origin);
  const headersUs: number[] = [];
  const totalUs: number[] = [];
  const overheadUs: number[] = [];
  const headers = { ...options.headers, 'content-length': String(options.body.length) };
  for (let i = 0; i < options.requests; i++) {
    if (options.gapMs) await new Promise((resolve) => setTimeout(resolve, options.gapMs));
    await new Promise<void>((resolve, reject) => {
      const t0 = performance.now();
      const req = httpRequest({ host: url.hostname, port: url.port, path: options.path, method: 'POST', headers, agent }, (res) => {
        headersUs.push((performance.now() - t0) * 1000);
        const overhead = res.headers['x-herd-overhead-ms'];
        if (typeof overhead === 'string') overheadUs.push(Number(overhead) * 1000);
        res.on('data', () => undefined);
        res.on('end', () => {
          totalUs.push((performance.now() - t0) * 1000);
          if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`));
          else resolve();
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(options.body);
    });
  }
  const h = headersUs.sort((a, b) => a - b);
  const t = totalUs.sort((a, b) => a - b);
  const o = overheadUs.sort((a, b) => a - b);
  return {
    requests: options.requests,
    headersP50us: percentile(h, 0.5),
    headersP99us: percentile(h, 0.99),
    totalP50us: percentile(t, 0.5),
    totalP99us: percentile(t, 0.99),
    overheadP50us: o.length > 0 ? percentile(o, 0.5) : undefined,
  };
}
