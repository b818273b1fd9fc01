// One gRPC call on a node:http2 stream: its metadata and peer, its deadline, a signal that fires when the client
// cancels (RST_STREAM), the stream closes early or the deadline passes, and the answer (messages, then trailers;
// or trailers alone for a call that fails before its first message).
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { LightAbortController, type LightAbortSignal } from '../core/abort-link.ts';
import { HerdError } from '../core/errors.ts';
import { type CallMetadata, HeaderMetadata } from './grpc-call-metadata.ts';
import { ACCEPTED_ENCODINGS, encodeGrpcMessage, GrpcMessageReader, type MessageEncoding, parseGrpcTimeout } from './grpc-frames.ts';
import { convertErrorToServiceError, GrpcCode, type GrpcStatus } from './map-grpc-status.ts';

const CONTENT_TYPE = 'application/grpc+proto';
const RESPONSE_HEADERS = { ':status': 200, 'content-type': CONTENT_TYPE, 'grpc-accept-encoding': ACCEPTED_ENCODINGS, 'grpc-encoding': 'identity' };
const OK_TRAILERS = { 'grpc-status': '0' };

export class GrpcHttp2Call {
  readonly metadata: CallMetadata;
  private readonly abort = new LightAbortController();
  private headersSent = false;
  private timer: NodeJS.Timeout | undefined;
  /** True once the status went out (or the stream went away): nothing more is written. */
  ended = false;

  constructor(
    readonly stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    private readonly peer: string,
  ) {
    this.metadata = new HeaderMetadata(headers);
    const timeout = parseGrpcTimeout(headers['grpc-timeout'] as string | undefined);
    if (Number.isNaN(timeout)) {
      // As grpc-js: the call fails at once (after the handler is set up, so its listeners see it).
      process.nextTick(() => this.end({ code: GrpcCode.INTERNAL, details: `Invalid grpc-timeout value "${String(headers['grpc-timeout'])}"` }));
    } else if (timeout !== undefined) {
      this.timer = setTimeout(() => this.end({ code: GrpcCode.DEADLINE_EXCEEDED, details: 'Deadline exceeded' }), timeout);
      this.timer.unref();
    }
    stream.on('close', () => {
      if (this.ended) return;
      this.ended = true;
      this.stop({ code: GrpcCode.CANCELLED, details: 'Cancelled' });
    });
  }

  get signal(): LightAbortSignal {
    return this.abort.signal;
  }

  getPeer(): string {
    return this.peer;
  }

  /** Feeds the request's DATA to `onMessage`, message by message; `onEnd` once the client half-closes. A framing error ends the call. */
  read(encoding: MessageEncoding, maxMessageBytes: number, onMessage: (message: Buffer) => void, onEnd: () => void): void {
    const reader = new GrpcMessageReader(encoding, maxMessageBytes, onMessage);
    this.stream.on('data', (chunk: Buffer) => {
      if (this.ended) return;
      try {
        reader.push(chunk);
      } catch (err) {
        this.fail(err);
      }
    });
    this.stream.on('end', () => {
      if (this.ended) return;
      if (reader.partial) this.end({ code: GrpcCode.INTERNAL, details: 'Received incomplete message' });
      else onEnd();
    });
  }

  /** The one request message of a unary call, once the client half-closed; none or two end the call as grpc-js does. */
  readUnary(path: string, encoding: MessageEncoding, maxMessageBytes: number, onRequest: (message: Buffer) => void): void {
    let request: Buffer | undefined;
    this.read(
      encoding,
      maxMessageBytes,
      (message) => {
        if (request === undefined) request = message;
        else this.end({ code: GrpcCode.UNIMPLEMENTED, details: `Received a second request message for unary method ${path}` });
      },
      () => {
        if (request === undefined) this.end({ code: GrpcCode.UNIMPLEMENTED, details: `Received no request message for unary method ${path}` });
        else onRequest(request);
      },
    );
  }

  /** A unary answer: headers, the one framed message, then OK trailers. */
  sendUnary(frame: Buffer): void {
    if (this.ended || this.stream.closed) return;
    this.ended = true;
    this.clearTimer();
    const stream = this.stream;
    stream.respond(RESPONSE_HEADERS, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers(OK_TRAILERS));
    stream.end(frame);
  }

  /** One framed message of a streaming answer (headers go out before the first). */
  write(frame: Buffer): void {
    if (this.ended || this.stream.closed) return;
    if (!this.headersSent) {
      this.headersSent = true;
      this.stream.respond(RESPONSE_HEADERS, { waitForTrailers: true });
    }
    this.stream.write(frame);
  }

  /** Ends the call with `status` (OK when absent): trailers after a sent message, or a trailers-only answer. */
  end(status?: GrpcStatus): void {
    if (this.ended) return;
    this.ended = true;
    this.clearTimer();
    if (status !== undefined && status.code !== 0) this.stop(status);
    if (this.stream.destroyed || this.stream.closed) return;
    const trailers = status === undefined || status.code === 0 ? OK_TRAILERS : { 'grpc-status': String(status.code), 'grpc-message': encodeGrpcMessage(status.details) };
    if (!this.headersSent) {
      this.headersSent = true;
      this.stream.respond({ ':status': 200, 'content-type': CONTENT_TYPE, 'grpc-accept-encoding': ACCEPTED_ENCODINGS, ...trailers }, { endStream: true });
      return;
    }
    const stream = this.stream;
    stream.once('wantTrailers', () => stream.sendTrailers(trailers));
    stream.end();
  }

  /** Ends the call with the status an error maps to. */
  fail(err: unknown): void {
    this.end(convertErrorToServiceError(err));
  }

  private stop(status: GrpcStatus): void {
    this.clearTimer();
    // The reason a queued or running request reports: the call's own status words (`Cancelled`, `Deadline exceeded`, …).
    this.abort.abort(new HerdError('CANCELLED', status.details));
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
