// A closed-loop gRPC load from h2load (Debian's nghttp2-client, C, one thread): C connections, one stream
// each, every request the same framed ModelInferRequest read from a file. h2load books any HTTP 2xx as
// "succeeded", a gRPC error (200 with grpc-status in a trailers-only answer) included, so answers are
// also counted by their bytes: a success carries exactly one response frame of a known size, an error none.
import { spawn } from 'node:child_process';

export interface H2loadSpec {
  /** http://127.0.0.1:PORT: h2load speaks h2c with prior knowledge to an http URI, as gRPC clients do. */
  origin: string;
  path: string;
  bodyFile: string;
  headers: Record<string, string>;
  concurrency: number;
  /** Streams each connection keeps in flight (h2load -m); connections = concurrency ÷ this. Default 1, as wrk's connections. */
  streamsPerConnection?: number;
  seconds: number;
  /** The size of the DATA a successful answer carries (one framed response). */
  answerBytes: number;
}

export interface ToolWindow {
  /** Requests completed inside the window, as the tool counts them. */
  requests: number;
  seconds: number;
  /** Requests that did not succeed: transport errors, non-2xx, and (gRPC) answers without the message. */
  failed: number;
  meanLatencyUs: number;
}

const UNIT_US: Record<string, number> = { us: 1, ms: 1000, s: 1e6 };

/** Parses the summary h2load prints at its end. */
export function parseH2loadOutput(out: string, answerBytes: number): ToolWindow {
  const finished = /finished in ([\d.]+)(us|ms|s),/.exec(out);
  const requests = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(out);
  const statuses = /status codes: (\d+) 2xx/.exec(out);
  const data = /traffic: .* \((\d+)\) data/.exec(out);
  const latency = /time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)\s/.exec(out);
  if (!finished || !requests || !statuses || !data || !latency) throw new Error(`unreadable h2load output:\n${out}`);
  const [done, succeeded] = [Number(requests[3]), Number(requests[4])];
  // DATA bytes cover every 2xx answer that arrived, those finishing after the window too.
  const withMessage = Number(data[1]) / answerBytes;
  const grpcErrors = Math.max(0, Math.round(Number(statuses[1]) - withMessage));
  return {
    requests: done,
    seconds: (Number(finished[1]) * (UNIT_US[finished[2] as string] as number)) / 1e6,
    failed: done - succeeded + grpcErrors,
    meanLatencyUs: Number(latency[1]) * (UNIT_US[latency[2] as string] as number),
  };
}

export async function runH2loadLoad(spec: H2loadSpec): Promise<ToolWindow> {
  const headers = Object.entries(spec.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const streams = Math.min(spec.concurrency, spec.streamsPerConnection ?? 1);
  const connections = Math.ceil(spec.concurrency / streams);
  const args = ['-t1', `-c${connections}`, `-m${streams}`, `-D${spec.seconds}`, '-d', spec.bodyFile, ...headers, spec.origin + spec.path];
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('h2load', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      text += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`h2load exited with ${code}: ${text}`))));
  });
  return parseH2loadOutput(out, spec.answerBytes);
}
