// An append-only local file of ledger rows not yet in the database: a request's rows are appended (one
// write per event-loop turn for every request finishing in it) before its answer's last byte, so a
// process killed at any moment loses none; rows are deleted from it once the database holds them.
// Survives a killed process, not a power cut (no fsync), like SQLite's synchronous=NORMAL.
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { HerdError } from '../../core/errors.ts';
import { type AttemptIntent, intentLine, parseIntentLine } from './ledger-intents.ts';
import type { LedgerEntry } from './ledger-entry.ts';

const LOCK = 'owner.pid';

interface Segment {
  name: string;
  fd: number | undefined;
  /** Entries appended to it and not yet written to the database. */
  pending: number;
  sealed: boolean;
}

export class LedgerSpool {
  private current: Segment;
  private readonly segments = new Map<string, Segment>();
  private sequence = 0;
  private readonly boot: string;

  /** Takes the folder (one live process at a time) and returns what a previous process left in it, in order. */
  static open(dir: string): { spool: LedgerSpool; leftovers: LedgerEntry[]; intents: AttemptIntent[]; leftoverFiles: string[] } {
    try {
      mkdirSync(dir, { recursive: true });
      claimFolder(dir);
      const leftoverFiles = readdirSync(dir)
        .filter((f) => f.endsWith('.jsonl'))
        .sort();
      const leftovers: LedgerEntry[] = [];
      const intents: AttemptIntent[] = [];
      for (const file of leftoverFiles) {
        const text = readFileSync(join(dir, file), 'utf8');
        leftovers.push(...parseSpoolText(text));
        intents.push(...parseSpoolIntents(text));
      }
      return { spool: new LedgerSpool(dir), leftovers, intents, leftoverFiles };
    } catch (err) {
      if (err instanceof HerdError) throw err;
      throw new HerdError('UNAVAILABLE', `cannot open the ledger spool ${dir}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }

  private constructor(private readonly dir: string) {
    // Names sort in the order they were written: boot time, then sequence.
    this.boot = `${String(Date.now()).padStart(15, '0')}-${process.pid}`;
    this.current = this.newSegment();
  }

  /** Appends the entries in one write; returns the segment they went to (pass it to written()). */
  append(entries: readonly LedgerEntry[]): string {
    const segment = this.current;
    segment.fd ??= openSync(join(this.dir, segment.name), 'a');
    const text = `${entries.map((e) => JSON.stringify([e.request, e.attempts])).join('\n')}\n`;
    writeSync(segment.fd, text);
    segment.pending += entries.length;
    return segment.name;
  }

  /**
   * Before an upstream call: one synchronous write of its intent. It stays pending in its file until
   * written(segment, 1) says the attempt's final rows are in the database; returns that segment.
   */
  intend(intent: AttemptIntent): string {
    const segment = this.current;
    segment.fd ??= openSync(join(this.dir, segment.name), 'a');
    writeSync(segment.fd, intentLine(intent));
    segment.pending += 1;
    return segment.name;
  }

  /** Later appends go to a new file, so this one can be deleted once its rows are in the database. */
  seal(): void {
    if (this.current.pending === 0 && this.current.fd === undefined) return;
    this.current.sealed = true;
    this.closeFd(this.current);
    this.current = this.newSegment();
    this.collect();
  }

  /** The database now holds `count` entries appended to `segment`. */
  written(segment: string, count: number): void {
    const s = this.segments.get(segment);
    if (!s) return;
    s.pending -= count;
    this.collect();
  }

  /** Files a previous process left, once their rows are in the database. */
  removeFiles(files: readonly string[]): void {
    for (const file of files) unlinkQuietly(join(this.dir, file));
  }

  /** Deletes the files whose rows are all in the database (all of them after a full flush). */
  close(): void {
    this.current.sealed = true;
    this.collect();
    for (const s of this.segments.values()) this.closeFd(s);
    unlinkQuietly(join(this.dir, LOCK));
  }

  private newSegment(): Segment {
    const segment: Segment = { name: `${this.boot}-${String(this.sequence++).padStart(9, '0')}.jsonl`, fd: undefined, pending: 0, sealed: false };
    this.segments.set(segment.name, segment);
    return segment;
  }

  private collect(): void {
    for (const s of this.segments.values()) {
      if (!s.sealed || s.pending > 0) continue;
      this.closeFd(s);
      unlinkQuietly(join(this.dir, s.name));
      this.segments.delete(s.name);
    }
  }

  private closeFd(s: Segment): void {
    if (s.fd !== undefined) closeSync(s.fd);
    s.fd = undefined;
  }
}

/** The attempt intents in a spool file's text (a torn line is skipped: its call was not sent). */
export function parseSpoolIntents(text: string): AttemptIntent[] {
  const intents: AttemptIntent[] = [];
  for (const line of text.split('\n')) {
    const intent = parseIntentLine(line);
    if (intent) intents.push(intent);
  }
  return intents;
}

/** Lines of [request, attempts]; a torn last line (the process died inside a write) is skipped: its answer was not sent. */
export function parseSpoolText(text: string): LedgerEntry[] {
  const entries: LedgerEntry[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('{')) continue; // blank, or an intent
    try {
      const [request, attempts] = JSON.parse(line) as [LedgerEntry['request'], LedgerEntry['attempts']];
      if (request && typeof request.requestId === 'string' && Array.isArray(attempts)) entries.push({ request, attempts });
    } catch {
      // torn line
    }
  }
  return entries;
}

/** One live process per spool folder: another live owner means two servers were given one ledger folder. */
function claimFolder(dir: string): void {
  const lock = join(dir, LOCK);
  let owner: number | undefined;
  try {
    owner = Number(readFileSync(lock, 'utf8').trim());
  } catch {
    owner = undefined;
  }
  // A container restarts with the same pid: an owner with ours is a previous life of this process.
  if (owner !== undefined && Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
    throw new HerdError('UNAVAILABLE', `the ledger spool ${dir} belongs to running process ${owner}: give each server its own ledger file or spool folder`);
  }
  writeFileSync(lock, `${process.pid}\n`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
