// Display helpers: money from integer micros (exact, no floating point), counts, durations and times.

/** 1234567 micros → "1.234567"; 1500000 → "1.50" (at least two decimals, trailing zeros trimmed beyond them). */
export function microsToDecimal(micros: number): string {
  const negative = micros < 0;
  const abs = Math.abs(Math.round(micros));
  const whole = Math.floor(abs / 1_000_000);
  let fraction = String(abs % 1_000_000).padStart(6, '0');
  while (fraction.length > 2 && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  return `${negative ? '-' : ''}${whole.toLocaleString('en-US')}.${fraction}`;
}

/** "EUR 1.50": the amount in the currency named, never converted. */
export function money(micros: number | null | undefined, currency: string | null | undefined): string {
  if (micros === null || micros === undefined) return '—';
  return `${currency ?? ''} ${microsToDecimal(micros)}`.trim();
}

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toLocaleString('en-US');
}

export function rate(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

/** Nanoseconds total over a count → average milliseconds. */
export function averageMs(duration: { count: number; ns: number } | undefined): string {
  if (!duration || duration.count === 0) return '—';
  return `${(duration.ns / duration.count / 1e6).toFixed(2)} ms`;
}

export function time(value: number | string | null | undefined): string {
  if (value === null || value === undefined || value === '') return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'null';
}

export function orDash(value: string | number | null | undefined): string {
  return value === null || value === undefined || value === '' ? '—' : String(value);
}

/** "12.5" → 12500000: a decimal amount to integer micros without floating point; undefined when not a number. */
export function decimalToMicros(text: string): number | undefined {
  const match = /^\s*(\d+)(?:\.(\d{0,6}))?\s*$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 1_000_000 + Number((match[2] ?? '').padEnd(6, '0'));
}
