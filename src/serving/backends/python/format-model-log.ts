// A log record from a Python model (pb_utils.Logger, or the stub reporting a failed execute) as a line
// of Herd's log: the instance, the level, and the model's `file:line]` as Triton prints them; levels the
// server's log settings turn off (log_info, log_warning, log_error; VERBOSE below log_verbose_level 1) are dropped.
import { escapeLogText } from '../../../core/escape-log-text.ts';
import type { StubHeader } from './stub-wire.ts';

/** The slice of the server's log settings (GET/POST /v2/logging) that decides which records show. */
export interface ModelLogLevels {
  log_info: boolean;
  log_warning: boolean;
  log_error: boolean;
  log_verbose_level: number;
}

/** pb_utils.Logger's levels, by their number on the wire (Triton's LogLevel enum). */
const LEVELS = ['INFO', 'WARNING', 'ERROR', 'VERBOSE'] as const;

export function formatModelLogRecord(label: string, header: StubHeader, levels?: ModelLogLevels): string | undefined {
  const level = LEVELS[Number(header['level'])] ?? 'INFO';
  if (levels && !isShown(level, levels)) return undefined;
  const file = header['file'];
  const where = typeof file === 'string' && file ? ` ${escapeLogText(file)}:${Number(header['line']) || 0}]` : ':';
  // A model may log what a client sent: escaped, so a record never spans lines.
  return `python model ${label} ${level}${where} ${escapeLogText(String(header['message']))}`;
}

function isShown(level: (typeof LEVELS)[number], levels: ModelLogLevels): boolean {
  switch (level) {
    case 'INFO':
      return levels.log_info;
    case 'WARNING':
      return levels.log_warning;
    case 'ERROR':
      return levels.log_error;
    default:
      return levels.log_verbose_level >= 1;
  }
}
