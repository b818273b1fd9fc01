// Triton's machine-wide CPU metrics from Linux's /proc: nv_cpu_utilization from /proc/stat deltas,
// nv_cpu_memory_total_bytes and nv_cpu_memory_used_bytes (total - available) from /proc/meminfo.
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import { createComputedGauge } from './computed-metric.ts';

/** The aggregate `cpu` line of /proc/stat, in USER_HZ ticks (guest time is already in user/nice). */
export interface CpuTimes {
  user: number;
  nice: number;
  system: number;
  idle: number;
  iowait: number;
  irq: number;
  softirq: number;
  steal: number;
}

export interface MemoryBytes {
  totalBytes: number;
  usedBytes: number;
}

const CPU_FIELDS = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal'] as const;

/** The first line of /proc/stat, or undefined when it is not the aggregate `cpu` line. */
export function parseProcStat(text: string): CpuTimes | undefined {
  const line = text.split('\n', 1)[0] ?? '';
  if (!line.startsWith('cpu ')) return undefined;
  const values = line.slice(4).trim().split(/\s+/).map(Number);
  // Kernels before 2.6.11 print fewer columns; the missing ones are 0 there.
  if (values.length < 4 || values.some((v) => !Number.isFinite(v))) return undefined;
  const times = {} as CpuTimes;
  CPU_FIELDS.forEach((field, i) => {
    times[field] = values[i] ?? 0;
  });
  return times;
}

/**
 * Busy share of all CPU time between two samples, as Triton computes it: user+nice+system+irq+
 * softirq+steal over that plus idle+iowait, each difference floored at 0 (counter wrap). undefined
 * when no tick elapsed, where Triton would divide 0 by 0.
 */
export function computeCpuUtilization(newer: CpuTimes, older: CpuTimes): number | undefined {
  const diff = (field: keyof CpuTimes) => Math.max(0, newer[field] - older[field]);
  const busy = diff('user') + diff('nice') + diff('system') + diff('irq') + diff('softirq') + diff('steal');
  const idle = diff('idle') + diff('iowait');
  return busy + idle === 0 ? undefined : busy / (busy + idle);
}

/** MemTotal and MemTotal - MemAvailable in bytes (Triton's "used"), or undefined when either is missing or inconsistent. */
export function parseMemInfo(text: string): MemoryBytes | undefined {
  const kib = (key: string) => {
    const match = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text);
    return match ? Number(match[1]) * 1024 : undefined;
  };
  const total = kib('MemTotal');
  const available = kib('MemAvailable');
  if (total === undefined || available === undefined || available > total) return undefined;
  return { totalBytes: total, usedBytes: total - available };
}

export interface CpuMetricsOptions {
  /** Reads a /proc file; tests pass their own. */
  readFile?: (path: '/proc/stat' | '/proc/meminfo') => string;
  /** Clock in ms; tests pass their own. */
  now?: () => number;
  /**
   * Shortest window a utilisation value covers. Triton refreshes the gauge about every second
   * (half of --metrics-interval-ms 2000); scrapes closer together than this repeat the last value
   * instead of measuring a window too short to mean anything.
   */
  minWindowMs?: number;
}

/**
 * Registers nv_cpu_utilization, nv_cpu_memory_total_bytes and nv_cpu_memory_used_bytes. Returns
 * false, registering nothing, where /proc/stat cannot be read (not Linux), as Triton has no CPU
 * metrics there; a later read failure reports 0, as Triton does.
 */
export function registerCpuMetrics(registry: Registry, options: CpuMetricsOptions = {}): boolean {
  const readFile = options.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const now = options.now ?? Date.now;
  const minWindowMs = options.minWindowMs ?? 1000;
  const sampleCpu = (): CpuTimes | undefined => {
    try {
      return parseProcStat(readFile('/proc/stat'));
    } catch {
      return undefined;
    }
  };
  const readMemory = (): MemoryBytes => {
    try {
      return parseMemInfo(readFile('/proc/meminfo')) ?? { totalBytes: 0, usedBytes: 0 };
    } catch {
      return { totalBytes: 0, usedBytes: 0 };
    }
  };

  // The baseline is taken now, so the first scrape reports the utilisation since registration.
  const baseline = sampleCpu();
  if (!baseline) return false;
  let last = { times: baseline, at: now() };
  let utilization: number | undefined;

  const currentUtilization = (): number => {
    if (utilization !== undefined && now() - last.at < minWindowMs) return utilization;
    const times = sampleCpu();
    if (!times) return 0;
    const value = computeCpuUtilization(times, last.times);
    if (value !== undefined) {
      utilization = value;
      last = { times, at: now() };
    }
    return utilization ?? 0;
  };

  createComputedGauge({
    registry,
    name: 'nv_cpu_utilization',
    help: 'CPU utilization rate [0.0 - 1.0]',
    labelNames: [],
    read: () => [{ labels: {}, value: currentUtilization() }],
  });
  createComputedGauge({
    registry,
    name: 'nv_cpu_memory_total_bytes',
    help: 'CPU total memory (RAM), in bytes',
    labelNames: [],
    read: () => [{ labels: {}, value: readMemory().totalBytes }],
  });
  createComputedGauge({
    registry,
    name: 'nv_cpu_memory_used_bytes',
    help: 'CPU used memory (RAM), in bytes',
    labelNames: [],
    read: () => [{ labels: {}, value: readMemory().usedBytes }],
  });
  return true;
}
