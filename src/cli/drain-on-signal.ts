// `herd serve`'s answer to SIGTERM and SIGINT, as orchestrators need it: readiness fails at once, the listeners
// answer on for the drain grace, then close while what is in flight finishes, all within the exit timeout.
import type { HerdServer } from '../app.ts';

export interface DrainSettings {
  /** server.drain_grace_secs: how long the listeners keep answering after SIGTERM (SIGINT: none). */
  graceSecs: number;
  /** server.exit_timeout_secs: from the signal to the exit, however much is still running. */
  exitTimeoutSecs: number;
}

export interface DrainIo {
  say(line: string): void;
  exit(code: number): void;
}

/** How long a forced exit waits for the ledger's queued rows (its spool holds them for the next start anyway). */
const FORCED_FLUSH_MS = 5_000;

/**
 * Returns the signal handler. First signal: drain (SIGTERM with the grace; SIGINT, a person at a terminal,
 * without), exit 0 once everything is answered and the ledger flushed, exit 1 at the exit timeout. Any
 * later signal: flush the ledger and exit 1 at once.
 */
export function createDrainHandler(server: Pick<HerdServer, 'beginDrain' | 'close' | 'flushLedger'>, settings: DrainSettings, io: DrainIo): (signal: string) => void {
  let started = false;
  let finished = false;
  const finish = (code: number, line: string, flush: boolean) => {
    if (finished) return;
    finished = true;
    io.say(line);
    if (!flush) return io.exit(code);
    void flushWithin(server, FORCED_FLUSH_MS).then((problem) => {
      if (problem) io.say(`ledger flush failed: ${problem} (its spool keeps the rows for the next start)`);
      io.exit(code);
    });
  };
  return (signal) => {
    if (started) {
      finish(1, `${signal} again: exiting now without waiting for in-flight requests; flushing the ledger first`, true);
      return;
    }
    started = true;
    server.beginDrain();
    const exitTimeout = settings.exitTimeoutSecs;
    const grace = signal === 'SIGTERM' ? Math.min(settings.graceSecs, exitTimeout) : 0;
    io.say(
      `${signal} received: draining: /v2/health/ready answers 503, listeners keep answering for ${grace}s (each answer with Connection: close), ` +
        `then close; exit within ${exitTimeout}s of the signal; a second signal exits at once`,
    );
    // Not unref'd: a close() stuck on something holding no handle must still end in an exit, not a silent one.
    const deadline = setTimeout(
      () => finish(1, `exit timeout of ${exitTimeout}s reached with requests still running; flushing the ledger and exiting 1`, true),
      exitTimeout * 1000,
    );
    const closeListeners = () => {
      if (finished) return;
      io.say(`drain grace over: listeners closed (gRPC GOAWAY sent); waiting up to ${Math.max(0, exitTimeout - grace)}s for in-flight requests and streams`);
      server.close().then(
        () => {
          clearTimeout(deadline);
          finish(0, 'all requests answered; ledger flushed; exiting 0', false);
        },
        (err: unknown) => {
          clearTimeout(deadline);
          finish(1, `shutdown failed: ${err instanceof Error ? err.message : String(err)}; exiting 1`, true);
        },
      );
    };
    if (grace > 0) setTimeout(closeListeners, grace * 1000);
    else closeListeners();
  };
}

/** The ledger's flush, bounded: resolves with the problem, if any. */
async function flushWithin(server: Pick<HerdServer, 'flushLedger'>, ms: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`not done after ${ms / 1000}s`), ms);
  });
  try {
    return await Promise.race([server.flushLedger().then(() => undefined), timeout]);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    clearTimeout(timer);
  }
}
