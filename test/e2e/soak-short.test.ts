// The soak with faults, short (bench/soak/run-soak.ts runs it for minutes): two real replicas, their own
// redis-server, the PostgreSQL ledger behind a TCP proxy, fake upstreams with every fault mode; a replica
// SIGKILLed and restarted, Redis restarted, PostgreSQL cut off. Asserts the invariants, not timings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { formatSoakReport } from '../../bench/soak/format-soak-report.ts';
import { runSoak } from '../../bench/soak/soak.ts';
import { DATABASE_URL } from '../gateway/billing/pg-test-schema.ts';

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
const skip = !DATABASE_URL ? 'soak-short.test.ts: DATABASE_URL is not set' : !hasRedisServer ? 'soak-short.test.ts: redis-server is not on the PATH' : false;

test('a short soak with faults keeps the books', { skip, timeout: 300_000 }, async (t) => {
  const report = await runSoak({ seconds: 20, concurrency: 4, databaseUrl: DATABASE_URL as string, log: (line) => t.diagnostic(line) });
  const text = formatSoakReport(report);
  const failed = report.invariants.filter((r) => !r.ok);
  assert.deepEqual(
    failed.map((r) => r.invariant),
    [],
    text,
  );
  // The run did what it is for: answers of every kind, and the faults really happened.
  assert.ok((report.outcomes['answered 200'] ?? 0) > 20, text);
  assert.equal(report.input.events.length, 3, text);
  for (const mode of ['rate-limited', 'server-error', 'hang', 'reset-mid-stream', 'malformed-sse', 'slow-first-byte', 'no-usage']) {
    assert.ok((report.faultModes[mode] ?? 0) >= 1, `fault mode ${mode} ran: ${text}`);
  }
});
