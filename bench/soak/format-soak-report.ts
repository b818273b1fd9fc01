// The soak's report as Markdown: the invariants first (pass / FAIL), then what they rest on.
import { fmtUsd, type SoakReport } from './soak-checks.ts';

export function formatSoakReport(report: SoakReport, header: string[] = []): string {
  const { input } = report;
  const lines: string[] = [...header];
  lines.push(
    `Load: ${input.concurrency} clients for ${(input.loadMs / 1000).toFixed(0)} s (asked for ${input.seconds} s), mixed streaming and JSON, four keys, two replicas.`,
    '',
    '## Invariants',
    '',
    '| invariant | result | numbers |',
    '| --- | --- | --- |',
    ...report.invariants.map((r) => `| ${r.invariant} | ${r.ok ? 'pass' : '**FAIL**'} | ${r.detail} |`),
    '',
  );
  if (report.violations.length) lines.push('Violations:', '', ...report.violations.map((v) => `- ${v}`), '');
  lines.push('## Faults injected', '', '| at (s) | for (s) | what |', '| --- | --- | --- |');
  for (const e of [...input.events].sort((a, b) => a.from - b.from))
    lines.push(`| ${((e.from - input.t0) / 1000).toFixed(1)} | ${((e.until - e.from) / 1000).toFixed(1)} | ${e.what} |`);
  lines.push('', 'Upstream calls by fault mode (a marker’s first call only; retries are ok):', '', '| mode | calls |', '| --- | --- |');
  for (const [mode, n] of Object.entries(report.faultModes).sort()) lines.push(`| ${mode} | ${n} |`);
  lines.push('', '## What the client saw', '', '| outcome | requests |', '| --- | --- |');
  for (const [outcome, n] of Object.entries(report.outcomes).sort()) lines.push(`| ${outcome} | ${n} |`);
  lines.push('', '## Budgets', '', '| key | day | budget | spend counter | settled | open holds | one reservation |', '| --- | --- | --- | --- | --- | --- | --- |');
  for (const b of report.budgets)
    lines.push(`| ${b.key} | ${b.period} | ${fmtUsd(b.budget)} | ${fmtUsd(b.counter)} | ${fmtUsd(b.settled)} | ${fmtUsd(b.openHolds)} | ${fmtUsd(b.maxReservation)} |`);
  lines.push(
    '',
    '## RPM (admitted = ledger rows not RATE_LIMITED, by arrival time)',
    '',
    '| key | limit | Redis life | admitted | most in any 60 s |',
    '| --- | --- | --- | --- | --- |',
  );
  for (const r of report.rpm) lines.push(`| ${r.key} | ${r.limit} | ${r.segment} | ${r.admitted} | ${r.maxInWindow} |`);
  lines.push(
    '',
    '## Processes (RSS MiB / open fds)',
    '',
    'Sampled through each life: "mid" is the sample halfway through it; growth from mid to end is what a leak would keep adding, warm-up would not.',
    '',
    '| process | start | mid | peak RSS / peak fds | end | mid → end | samples |',
    '| --- | --- | --- | --- | --- | --- | ---: |',
  );
  const fmt = (r: { rssMiB: number; fds: number } | undefined) => (r ? `${r.rssMiB} / ${r.fds}` : '-');
  for (const p of input.resources) {
    const mid = p.samples[Math.floor(p.samples.length / 2)];
    const peak = p.samples.length === 0 ? undefined : { rssMiB: Math.max(...p.samples.map((s) => s.rssMiB)), fds: Math.max(...p.samples.map((s) => s.fds)) };
    const growth = mid !== undefined && p.end !== undefined ? `${(p.end.rssMiB - mid.rssMiB).toFixed(1)} MiB / ${p.end.fds - mid.fds} fds` : '-';
    lines.push(`| ${p.process} | ${fmt(p.start)} | ${fmt(mid)} | ${fmt(peak)} | ${fmt(p.end)} | ${growth} | ${p.samples.length} |`);
  }
  return `${lines.join('\n')}\n`;
}
