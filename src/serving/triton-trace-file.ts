// Triton mode's JSON trace file, byte for byte as tracer.cc writes it so Triton's trace_summary.py reads it:
// per trace id a model header and one object per timestamp, traces gathered per setting, and log-frequency rotation.
import { appendFileSync, writeFileSync } from 'node:fs';

export interface TritonTraceTimestamp {
  /** REQUEST_START, QUEUE_START, COMPUTE_START, …, HTTP_RECV_START, GRPC_SEND_END … */
  name: string;
  /** Monotonic nanoseconds, as Triton's steady clock gives them. */
  ns: bigint | number;
}

export interface TritonTraceTensor {
  activity: 'TENSOR_QUEUE_INPUT' | 'TENSOR_BACKEND_INPUT' | 'TENSOR_BACKEND_OUTPUT';
  name: string;
  /** The elements written out, comma separated (BYTES elements quoted), as Triton's TraceTensorActivity does. */
  data: string;
  shape: readonly number[];
  /** Triton's datatype name: INT32, FP32, BYTES … */
  datatype: string;
  /** Herd's bound cut the data short (trace-tensor.ts); Triton writes every element and has no such member. */
  truncated?: boolean;
}

/** One trace id of a request: the request itself, or (with parent_id) an ensemble step or a BLS call it made. */
export interface TritonTraceRecord {
  id: bigint | number;
  model_name: string;
  model_version: number;
  request_id?: string;
  /** The trace id of the request that made this one; absent (Triton's 0) for the request a client sent. */
  parent_id?: bigint | number;
  /** In the order they happened; frontend ones (HTTP_RECV_START) may come before REQUEST_START. */
  timestamps: readonly TritonTraceTimestamp[];
  tensors?: TritonTraceTensor[];
}

const text = (value: string) => JSON.stringify(value);

/**
 * One sampled request's trace as Triton streams it: for each id, `{"id","timestamps":[…]}` objects with the
 * model header (`model_name`, `model_version`, `request_id`, `parent_id`) at REQUEST_START, tensors after.
 */
export function formatTritonTrace(records: readonly TritonTraceRecord[]): string {
  return records.map(formatRecord).join(',');
}

function formatRecord(record: TritonTraceRecord): string {
  const id = String(record.id);
  const header = [`"id":${id}`, `"model_name":${text(record.model_name)}`, `"model_version":${record.model_version}`];
  if (record.request_id) header.push(`"request_id":${text(record.request_id)}`);
  if (record.parent_id !== undefined && BigInt(record.parent_id) !== 0n) header.push(`"parent_id":${String(record.parent_id)}`);
  const parts: string[] = [];
  let headerWritten = false;
  for (const stamp of record.timestamps) {
    if (stamp.name === 'REQUEST_START' && !headerWritten) {
      parts.push(`{${header.join(',')}}`);
      headerWritten = true;
    }
    parts.push(`{"id":${id},"timestamps":[{"name":${text(stamp.name)},"ns":${String(stamp.ns)}}]}`);
  }
  if (!headerWritten) parts.unshift(`{${header.join(',')}}`);
  for (const t of record.tensors ?? []) {
    const cut = t.truncated ? ',"truncated":true' : '';
    const tensor = `{"name":${text(t.name)},"data":${text(t.data)},"shape":${text(t.shape.join(','))},"dtype":${text(t.datatype)}${cut}}`;
    parts.push(`{"id":${id},"activity":${text(t.activity)},"tensor":${tensor}}`);
  }
  return parts.join(',');
}

/**
 * TraceFile: one trace file path. Traces go to `path` itself (opened at the first write, `[` … `]` closed at
 * shutdown) or, with a log frequency or a used-up count, to `path.0`, `path.1`, … each a whole JSON array.
 */
export class TritonTraceFile {
  private nextIndex = 0;
  private opened = false;

  constructor(
    readonly path: string,
    private readonly log: (line: string) => void = () => {},
  ) {}

  save(traces: string, toIndexFile: boolean): void {
    try {
      if (toIndexFile) {
        writeFileSync(`${this.path}.${this.nextIndex++}`, `[${traces}]`);
      } else if (!this.opened) {
        writeFileSync(this.path, `[${traces}`);
        this.opened = true;
      } else {
        appendFileSync(this.path, `,${traces}`);
      }
    } catch (err) {
      this.log(`failed creating trace file: ${(err as Error).message}`);
    }
  }

  /** Closes the array of the un-indexed file, as TraceFile's destructor does. */
  close(): void {
    if (!this.opened) return;
    this.opened = false;
    try {
      appendFileSync(this.path, ']');
    } catch (err) {
      this.log(`failed creating trace file: ${(err as Error).message}`);
    }
  }
}

/** What the writer needs from the setting's sampler to know when the count is used up. */
export interface TraceCounts {
  readonly count: number;
  readonly seen: number;
}

/** TraceSetting::WriteTrace: the traces of one setting, gathered until it is time to write them. */
export class TritonTraceLog {
  private pending: string[] = [];
  private collected = 0;

  constructor(
    private readonly file: TritonTraceFile,
    private readonly logFrequency: number,
    private readonly counts: TraceCounts,
  ) {}

  /** Adds a finished trace; writes the gathered ones to the next indexed file when the count is used up or log_frequency are gathered. */
  write(records: readonly TritonTraceRecord[]): void {
    this.pending.push(formatTritonTrace(records));
    this.collected += 1;
    // Triton compares traces collected with requests counted, so a used-up count writes early only at rate 1.
    const countDone = this.counts.count === 0 && this.collected === this.counts.seen;
    if (countDone || (this.logFrequency !== 0 && this.pending.length >= this.logFrequency)) {
      const traces = this.pending.join(',');
      this.pending = [];
      this.file.save(traces, true);
    }
  }

  /** The setting is retired or the server stops: what is left goes to the next indexed file, or to the file itself without a log frequency. */
  flush(): void {
    if (this.pending.length === 0) return;
    const traces = this.pending.join(',');
    this.pending = [];
    this.file.save(traces, this.logFrequency !== 0);
  }
}
