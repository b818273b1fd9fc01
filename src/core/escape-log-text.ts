// Log hygiene: client- and upstream-supplied text can hold CR, LF, ESC and other control characters that
// forge log lines or drive an operator's terminal. Messages are escaped where they are logged, and the
// one log sink (createSafeLog, wrapped in app.ts) makes sure no record can start a line of its own.
import { HerdError } from './errors.ts';

// C0 controls, DEL, C1 controls, and the Unicode line and paragraph separators.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this module's job
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above
const CONTROL_BUT_LF = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e' };

function escapeChar(char: string): string {
  return NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` on one line: every control character written as an escape (\n, \r, \t, \e, \u00XX). */
export function escapeLogText(text: string): string {
  return text.replace(CONTROL, escapeChar);
}

/**
 * An error for the log: its message escaped onto one line, then the stack frames (Herd's own code, never
 * client text) for Herd's own faults. A HerdError other than INTERNAL is an answer, not a fault: no stack.
 */
export function formatErrorForLog(err: unknown): string {
  if (!(err instanceof Error)) return escapeLogText(String(err));
  const head = `${err.name}: ${escapeLogText(err.message)}`;
  if (err instanceof HerdError && err.code !== 'INTERNAL') return escapeLogText(err.message);
  const stack = err.stack ?? '';
  const frames = stack.split('\n').filter((line) => /^\s+at /.test(line));
  return frames.length > 0 ? `${head}\n${frames.map(escapeLogText).join('\n')}` : head;
}

/**
 * The log sink every component writes through: control characters other than LF escaped, and every line
 * after the first indented, so a record is one line starting at column 0 plus indented continuation lines
 * (stacks, Python tracebacks) and no text inside a record can pass for a record of its own.
 */
export function createSafeLog(sink: (line: string) => void): (line: string) => void {
  return (line) => sink(line.replace(CONTROL_BUT_LF, escapeChar).replace(/\n(?![ \t])/g, '\n  '));
}
