// Which requests one trace setting traces, with Triton's rate and count semantics (TraceSetting::SampleTrace
// in tracer.cc): pure counting, no clock and no I/O. The trace settings store keeps one per setting in force.

export type TraceMode = 'triton' | 'opentelemetry';

export interface TraceSamplerSetting {
  /** TIMESTAMPS and/or TENSORS; empty is OFF. */
  levels: readonly ('TIMESTAMPS' | 'TENSORS')[];
  rate: number;
  count: number;
  mode: TraceMode;
  /** Triton mode's trace file; without one Triton mode traces nothing. */
  file: string;
}

export class TraceSampler {
  /** Requests counted (Triton's `sample_`): every request while tracing is valid, the traced ones included. */
  private counted = 0;
  private remaining: number;
  /** Why this setting traces nothing by rate (Triton's invalid_reason_), '' when it may. */
  readonly invalidReason: string;

  constructor(private readonly setting: TraceSamplerSetting) {
    this.remaining = setting.count;
    if (setting.levels.length === 0) this.invalidReason = 'tracing is disabled';
    else if (setting.rate === 0) this.invalidReason = 'sample rate must be non-zero';
    else if (setting.mode === 'triton' && setting.file === '') this.invalidReason = 'trace file name is not given';
    else this.invalidReason = '';
  }

  /** The count left: -1 (or any negative) is no limit; it reaches 0 and stays there. */
  get count(): number {
    return this.remaining;
  }

  /** Requests counted so far; Triton writes its trace file early once every counted request was traced. */
  get seen(): number {
    return this.counted;
  }

  /** Valid() in Triton: a reason-free setting with count left. */
  get valid(): boolean {
    return this.invalidReason === '' && this.remaining !== 0;
  }

  /**
   * Whether to trace one request: every rate-th request while count lasts. A request carrying a W3C
   * traceparent is always traced in OpenTelemetry mode unless the level is OFF, as Triton forces it
   * (and still counts it: it may use up the count).
   */
  sample(request: { propagated: boolean }): boolean {
    const forced = request.propagated && this.setting.levels.length > 0 && this.setting.mode === 'opentelemetry';
    let hit = false;
    // Rate 0 is Triton's way to trace only propagated requests.
    if (this.setting.rate !== 0) {
      if (!this.valid && !forced) return false;
      this.counted += 1;
      hit = this.counted % this.setting.rate === 0;
      if (hit && this.remaining > 0) this.remaining -= 1;
      else if (hit && this.remaining === 0) hit = false;
    }
    return hit || forced;
  }
}
