// CI's advisory check: `npm audit --omit=dev --audit-level=high` on the production dependencies. Fails on a
// known high or critical advisory; says so plainly, and passes, when the registry's advisory service does not
// answer (no network, a registry mirror without the audit endpoint): an audit report has `metadata.vulnerabilities`,
// an unreachable service gives an error object instead, whatever npm's exit code.
import { spawnSync } from 'node:child_process';

const run = spawnSync('npm', ['audit', '--omit=dev', '--audit-level=high', '--json'], { encoding: 'utf8', timeout: 120_000 });
let report;
try {
  report = JSON.parse(run.stdout);
} catch {
  report = undefined;
}
const counts = report?.metadata?.vulnerabilities;
if (counts === undefined || typeof counts !== 'object') {
  const reason = report?.message ?? report?.error?.summary ?? run.error?.message ?? (run.stderr.trim().split('\n').pop() || `npm exited ${run.status}`);
  console.log(`npm audit: the advisory service could not be reached (${reason}); production dependencies were NOT checked for advisories.`);
  process.exit(0);
}
const high = (counts.high ?? 0) + (counts.critical ?? 0);
if (high > 0) {
  console.log(`npm audit: ${counts.critical ?? 0} critical and ${counts.high ?? 0} high-severity advisories in production dependencies:`);
  for (const [name, v] of Object.entries(report.vulnerabilities ?? {})) {
    if (v.severity === 'high' || v.severity === 'critical') console.log(`  ${name} (${v.severity}) ${v.range ?? ''}`);
  }
  console.log('Run `npm audit --omit=dev` for details and fixes.');
  process.exit(1);
}
console.log(`npm audit: no high or critical advisories in production dependencies (${counts.total ?? 0} lower-severity).`);
