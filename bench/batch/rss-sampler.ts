// Resident memory of one process from /proc/<pid>/status: VmRSS sampled every 50 ms for a phase's peak (VmHWM is the
// whole life's peak, start-up included, so it cannot say which phase reached it).
import { readFileSync } from 'node:fs';

export const readStatusKiB = (pid: number, field: 'VmRSS' | 'VmHWM' | 'RssAnon' | 'RssFile'): number =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

export class RssSampler {
  private readonly timer: NodeJS.Timeout;
  private peak = 0;
  /** RssAnon (heap, buffers) at the peak: RssFile is mapped files (code, SQLite's shared memory). */
  private peakAnon = 0;

  constructor(private readonly pid: number) {
    this.timer = setInterval(() => this.sample(), 50);
  }

  private sample(): void {
    try {
      const rss = readStatusKiB(this.pid, 'VmRSS');
      if (rss > this.peak) {
        this.peak = rss;
        this.peakAnon = readStatusKiB(this.pid, 'RssAnon');
      }
    } catch {
      // the process has exited
    }
  }

  /** The highest VmRSS since the last call, in KiB; starts the next phase. */
  takePeak(): number {
    return this.takePeakWithAnon().rss;
  }

  /** As takePeak, with RssAnon at that moment. */
  takePeakWithAnon(): { rss: number; anon: number } {
    this.sample();
    const peak = { rss: this.peak, anon: this.peakAnon };
    this.peak = 0;
    this.peakAnon = 0;
    return peak;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
