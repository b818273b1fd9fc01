// Log settings as tritonserver's LogSettings answers them. One store answers both the gRPC LogSettings
// RPC and HTTP /v2/logging. Herd stores what a client sets and answers it; its own log lines do not
// change level with them, a Python model's pb_utils.Logger records do (as in Triton).
import { HerdError, invalidArg } from '../core/errors.ts';

export interface LogSettingValues {
  log_file: string;
  log_info: boolean;
  log_warning: boolean;
  log_error: boolean;
  log_verbose_level: number;
  log_format: string;
}

export type LogSettingUpdate = Record<string, string | number | boolean>;

const BOOLEAN_KEYS = ['log_info', 'log_warning', 'log_error'] as const;

export class LogSettings {
  private values: LogSettingValues = { log_file: '', log_info: true, log_warning: true, log_error: true, log_verbose_level: 0, log_format: 'default' };

  get(): LogSettingValues {
    return { ...this.values };
  }

  /** Validates every key first (Triton's messages), then applies them all. */
  update(update: LogSettingUpdate): LogSettingValues {
    const next = { ...this.values };
    for (const [key, value] of Object.entries(update)) {
      if (key === 'log_file') throw new HerdError('UNSUPPORTED', 'log file location can not be updated through network protocol');
      if ((BOOLEAN_KEYS as readonly string[]).includes(key)) {
        if (typeof value !== 'boolean') throw invalidArg(`expect boolean for '${key}'`);
        next[key as (typeof BOOLEAN_KEYS)[number]] = value;
      } else if (key === 'log_verbose_level') {
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw invalidArg(`expect int32 for '${key}'`);
        next.log_verbose_level = value;
      } else if (key === 'log_format') {
        if (typeof value !== 'string') throw invalidArg(`expect string for '${key}'`);
        if (value !== 'default' && value !== 'ISO8601') throw invalidArg(`invalid argument for log_format, got: ${value}`);
        next.log_format = value;
      } else {
        throw invalidArg(`unknown log setting '${key}'`);
      }
    }
    this.values = next;
    return this.get();
  }
}
