// Triton's CPU metrics: /proc/stat and /proc/meminfo parsing, utilisation as Triton computes it, and
// the gauges at scrape time (from fake /proc files and a fake clock, then from the real machine).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { Registry } from 'prom-client';
import { computeCpuUtilization, parseMemInfo, parseProcStat, registerCpuMetrics, type CpuTimes } from '../../src/metrics/cpu-metrics.ts';
import { parseExposition, sampleValue } from './parse-exposition.ts';

const STAT = 'cpu  100 10 50 800 20 5 5 10 7 0\ncpu0 50 5 25 400 10 2 3 5 3 0\nintr 12345\n';
const times = (t: Partial<CpuTimes>): CpuTimes => ({ user: 0, nice: 0, system: 0, idle: 0, iowait: 0, irq: 0, softirq: 0, steal: 0, ...t });

test('parseProcStat reads the aggregate cpu line (guest columns ignored: already in user/nice)', () => {
  assert.deepEqual(parseProcStat(STAT), { user: 100, nice: 10, system: 50, idle: 800, iowait: 20, irq: 5, softirq: 5, steal: 10 });
  assert.deepEqual(parseProcStat('cpu  1 2 3 4\n'), times({ user: 1, nice: 2, system: 3, idle: 4 }));
  assert.equal(parseProcStat('cpu0 1 2 3 4\n'), undefined);
  assert.equal(parseProcStat(''), undefined);
  assert.equal(parseProcStat('cpu  a b c d\n'), undefined);
});

test('computeCpuUtilization: busy (user+nice+system+irq+softirq+steal) over busy+idle+iowait', () => {
  const older = times({ user: 100, idle: 100 });
  assert.equal(computeCpuUtilization(times({ user: 130, nice: 10, system: 20, irq: 5, softirq: 5, steal: 5, idle: 120, iowait: 5 }), older), 75 / 100);
  // A counter that went backwards (wrap) counts as 0, as in Triton.
  assert.equal(computeCpuUtilization(times({ user: 50, idle: 110 }), older), 0);
  // No tick elapsed: undefined rather than Triton's 0/0.
  assert.equal(computeCpuUtilization(older, older), undefined);
});

test('parseMemInfo: MemTotal and MemTotal - MemAvailable, in bytes', () => {
  const meminfo = 'MemTotal:       16000 kB\nMemFree:         2000 kB\nMemAvailable:    6000 kB\nBuffers: 10 kB\n';
  assert.deepEqual(parseMemInfo(meminfo), { totalBytes: 16000 * 1024, usedBytes: 10000 * 1024 });
  assert.equal(parseMemInfo('MemTotal: 100 kB\n'), undefined);
  assert.equal(parseMemInfo('MemTotal: 100 kB\nMemAvailable: 200 kB\n'), undefined);
});

test('the gauges at scrape time: utilisation since the last window, memory now', async () => {
  let stat = 'cpu  100 0 0 100 0 0 0 0\n';
  let meminfo = 'MemTotal: 1000 kB\nMemAvailable: 250 kB\n';
  let clock = 0;
  const registry = new Registry();
  const registered = registerCpuMetrics(registry, {
    readFile: (path) => (path === '/proc/stat' ? stat : meminfo),
    now: () => clock,
    minWindowMs: 1000,
  });
  assert.equal(registered, true);
  const scrape = async () => {
    const families = parseExposition(await registry.metrics());
    return ['nv_cpu_utilization', 'nv_cpu_memory_total_bytes', 'nv_cpu_memory_used_bytes'].map((name) => {
      assert.equal(families.get(name)?.type, 'gauge');
      return sampleValue(families, name);
    });
  };

  clock = 2000;
  stat = 'cpu  130 0 0 170 0 0 0 0\n';
  assert.deepEqual(await scrape(), [0.3, 1024_000, 768_000]);

  // Within the window the last value stands; memory is read fresh on every scrape.
  clock = 2500;
  stat = 'cpu  230 0 0 170 0 0 0 0\n';
  meminfo = 'MemTotal: 1000 kB\nMemAvailable: 500 kB\n';
  assert.deepEqual(await scrape(), [0.3, 1024_000, 512_000]);

  clock = 3000;
  assert.deepEqual(await scrape(), [1, 1024_000, 512_000]);

  // No tick since the last sample: keep the last value rather than divide 0 by 0.
  clock = 9000;
  assert.deepEqual(await scrape(), [1, 1024_000, 512_000]);

  // Unreadable files report 0, as Triton does.
  stat = 'garbage';
  meminfo = 'garbage';
  clock = 20000;
  assert.deepEqual(await scrape(), [0, 0, 0]);
});

test('nothing is registered where /proc/stat cannot be read', async () => {
  const registry = new Registry();
  const registered = registerCpuMetrics(registry, {
    readFile: () => {
      throw new Error('ENOENT');
    },
  });
  assert.equal(registered, false);
  assert.equal(await registry.metrics(), '\n');
});

test('on this machine (Linux): utilisation within [0, 1], 0 < used < total', { skip: !existsSync('/proc/stat') }, async () => {
  const registry = new Registry();
  assert.equal(registerCpuMetrics(registry, { minWindowMs: 0 }), true);
  // Burn a little CPU so the window has ticks in it.
  const until = Date.now() + 50;
  while (Date.now() < until) Math.sqrt(Math.random());
  const families = parseExposition(await registry.metrics());
  const utilization = sampleValue(families, 'nv_cpu_utilization') ?? -1;
  const total = sampleValue(families, 'nv_cpu_memory_total_bytes') ?? 0;
  const used = sampleValue(families, 'nv_cpu_memory_used_bytes') ?? 0;
  assert.ok(utilization >= 0 && utilization <= 1, `utilization ${utilization}`);
  assert.ok(total > 0 && used > 0 && used < total, `used ${used} of ${total}`);
});
