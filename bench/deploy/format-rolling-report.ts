// The rolling-restart report as Markdown: pass criteria first, then failures against the SIGTERMs,
// the restarts, the request mix, the ledger's budgets and RPM, the steady 1/2/3-replica runs and CPU.
import { fmtUsd } from '../soak/soak-checks.ts';
import type { RollingReport } from './rolling-checks.ts';

const rel = (ms: number) => `${ms >= 0 ? '+' : ''}${ms} ms`;

export function formatRollingReport(report: RollingReport, header: string[]): string {
  const { options: o, network: net } = report;
  const lines: string[] = [...header];
  lines.push(
    `Network: ${net.mode === 'netns' ? `one network namespace per replica (${net.replicas.join(', ')}), veth pairs on a bridge at ${net.hostIp}/24` : `loopback ports (${net.reason})`}.`,
    `HAProxy: checks GET /v2/health/ready every 250 ms (rise 2, fall 2), option redispatch, retries ${o.retries}, retry-on ${o.retryOn ?? '(HAProxy default: conn-failure)'}, http-reuse safe, keep-alive both sides.`,
    `Load: ${o.concurrency} clients on keep-alive connections for ${(report.loadMs / 1000).toFixed(1)} s (asked ${o.seconds} s): ¼ KServe infer on simple, ⅜ chat JSON, ⅜ chat streamed; chat keys 75% plain, 15% RPM ${o.rpm}/min, 10% day budget ${fmtUsd(o.budgetMicros)}.`,
    '',
    `**Result: ${report.ok ? 'PASS' : 'FAIL'}** — ${report.failures.length} of ${report.total} client requests failed.`,
    '',
    '## Pass criteria',
    '',
    '| criterion | result | numbers |',
    '| --- | --- | --- |',
    ...report.invariants.map((r) => `| ${r.invariant} | ${r.ok ? 'pass' : '**FAIL**'} | ${r.detail} |`),
    '',
  );
  // The soak's RPM count by started_at is replaced above by the limiter's own log.
  const violations = report.soak.violations.filter((v) => !/admitted in 60 s, limit/.test(v));
  if (violations.length) lines.push('Ledger violations:', '', ...violations.map((v) => `- ${v}`), '');
  lines.push('## Restarts', '', '| replica | SIGTERM at (s) | exit after | exit code | listening after exit | UP in HAProxy after |', '| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const e of report.events)
    lines.push(
      `| ${e.replica} | ${((e.sigtermAt - report.t0) / 1000).toFixed(1)} | ${e.exitedAt - e.sigtermAt} ms | ${e.exitCode} | ${e.listeningAt - e.exitedAt} ms | ${e.upAt - e.listeningAt} ms |`,
    );
  lines.push('', `## Failed requests (${report.failures.length})`, '');
  if (report.failures.length) {
    const groups = new Map<string, number>();
    for (const f of report.failures) {
      const g = `${f.status ?? f.errorCode} from ${f.server ?? '(no header)'} near the SIGTERM of ${f.nearest}`;
      groups.set(g, (groups.get(g) ?? 0) + 1);
    }
    lines.push(...[...groups].map(([g, n]) => `- ${n} × ${g}`), '');
    lines.push(
      '| marker | kind | key | status | error | message | answered by | sent | ended | relative to SIGTERM of |',
      '| ---: | --- | --- | --- | --- | --- | --- | ---: | ---: | --- |',
    );
    for (const f of report.failures.slice(0, 40))
      lines.push(
        `| ${f.marker} | ${f.kind} | ${f.key ?? '-'} | ${f.status ?? '-'} | ${(f.errorCode ?? '-').replace(/[<>|]/g, ' ')} | ${(f.message ?? '-').replace(/[<>|]/g, ' ')} | ${(f.server ?? '-').replace(/[<>]/g, '')} | ${rel(f.sentRel)} | ${rel(f.endedRel)} | ${f.nearest} |`,
      );
    if (report.failures.length > 40) lines.push(`| … ${report.failures.length - 40} more | | | | | | | | | |`);
  } else lines.push('None.');
  // HAProxy's own 503s when no server was UP are one line each: counted, not listed.
  const nosrv = report.haproxyLog.filter((l) => l.line.includes('<NOSRV>')).length;
  const logLines = report.haproxyLog.filter((l) => !l.line.includes('<NOSRV>') && !/Proxy .* started|Loading success|^\[WARNING\]|^\[ALERT\]/.test(l.line));
  lines.push('', `## HAProxy log (failed, retried or redispatched requests; server state changes): ${logLines.length} lines, and ${nosrv} 503s with no server UP`, '', '```');
  // Requests that ended abnormally first (termination state other than ----), then state changes and retries.
  const abnormal = (line: string) => / [A-Za-z-]{4} \d+\/\d+\/\d+\/\d+\/\+?\d+ /.test(line) && !line.includes(' ---- ');
  const ordered = [...logLines.filter((l) => abnormal(l.line)), ...logLines.filter((l) => !abnormal(l.line))];
  for (const l of ordered.slice(0, 80)) lines.push(`${((l.at - report.t0) / 1000).toFixed(3)}s ${l.line.slice(0, 220)}`);
  if (ordered.length > 80) lines.push(`… ${ordered.length - 80} more`);
  lines.push('```', '', '## Requests during the rolling restart', '', '| kind, key, status | requests |', '| --- | ---: |');
  for (const [k, n] of Object.entries(report.mix).sort()) lines.push(`| ${k} | ${n} |`);
  lines.push(
    '',
    'Answered by (x-rr-server): ' +
      Object.entries(report.perServer)
        .map(([s, n]) => `${s} ${n}`)
        .join(', ') +
      '.',
  );
  lines.push('', '## Budget and RPM (ledger)', '', '| key | day | budget | spend | settled | open holds | one reservation |', '| --- | --- | --- | --- | --- | --- | --- |');
  for (const b of report.soak.budgets)
    lines.push(`| ${b.key} | ${b.period} | ${fmtUsd(b.budget)} | ${fmtUsd(b.counter)} | ${fmtUsd(b.settled)} | ${fmtUsd(b.openHolds)} | ${fmtUsd(b.maxReservation)} |`);
  lines.push('', '| key | limit / 60 s | admitted | most admitted in any 60 s |', '| --- | ---: | ---: | ---: |');
  for (const r of report.soak.rpm) lines.push(`| ${r.key} | ${r.limit} | ${r.admitted} | ${r.maxInWindow} |`);
  const procs = [...new Set(report.steady.flatMap((s) => Object.keys(s.cpu)))];
  lines.push(
    '',
    '## Throughput with 1, 2 and 3 replicas',
    '',
    `Steady runs before the restarts, ${o.concurrency} clients, the same mix on the plain key, the other replicas in HAProxy maintenance. CPU: cores used on average (user + system from /proc/<pid>/stat ÷ wall time).`,
    '',
    `| replicas | req/s | complete | failed | ${procs.map((p) => `CPU ${p}`).join(' | ')} |`,
    `| ---: | ---: | ---: | ---: | ${procs.map(() => '---:').join(' | ')} |`,
  );
  for (const s of report.steady)
    lines.push(
      `| ${s.replicas} | ${((s.ok + s.failed) / (s.ms / 1000)).toFixed(0)} | ${s.ok} | ${s.failed} | ${procs.map((p) => (s.cpu[p] === undefined ? '-' : s.cpu[p].toFixed(2))).join(' | ')} |`,
    );
  lines.push(
    '',
    `CPU seconds during the rolling phase (a restarted replica: both lives, its start-up included): ${Object.entries(report.cpu)
      .map(([p, s]) => `${p} ${s.toFixed(1)}`)
      .join(', ')}.`,
    '',
  );
  return `${lines.join('\n')}\n`;
}
