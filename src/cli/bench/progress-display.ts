// Live progress on stderr while measuring: on a terminal one line redrawn in place with \r, anywhere
// else (CI logs, pipes) one plain line per window so the log stays readable.
import type { WindowProgress } from './measure-level.ts';

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export class ProgressDisplay {
  private lineOpen = false;

  constructor(private readonly stream: ProgressStream) {}

  window(progress: WindowProgress): void {
    const what = progress.mode === 'concurrency' ? `concurrency ${progress.level}` : `request rate ${progress.level}/s`;
    const latency = Number.isFinite(progress.latencyUs) ? `${Math.round(progress.latencyUs)} µs` : '-';
    const failed = progress.failed > 0 ? `, ${progress.failed} failed` : '';
    const text = `${what}: window ${progress.trial}/${progress.maxTrials}, ${progress.inferPerSec.toFixed(1)} infer/s, latency ${latency}${failed}`;
    if (this.stream.isTTY === true) {
      // \x1b[K clears what a longer previous line left behind.
      this.stream.write(`\r${text}\x1b[K`);
      this.lineOpen = true;
    } else {
      this.stream.write(`${text}\n`);
    }
  }

  /** A line that must stay (a level's verdict, a warning): ends any line being redrawn first. */
  note(text: string): void {
    this.finish();
    this.stream.write(`${text}\n`);
  }

  finish(): void {
    if (this.lineOpen) this.stream.write('\n');
    this.lineOpen = false;
  }
}
