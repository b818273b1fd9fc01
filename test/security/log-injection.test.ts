// Log hygiene (#35): a shared-memory key holding CR, LF and ESC forged a log line and was logged as an
// internal error with a stack. Now such a key is a 400 naming it (not logged), client text is escaped
// wherever it is logged, and the one sink keeps every record on lines of its own.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../src/core/errors.ts';
import { createSafeLog, escapeLogText, formatErrorForLog } from '../../src/core/escape-log-text.ts';
import { createKserveErrorAnswer, mapErrorToKserve } from '../../src/http/map-kserve-error.ts';
import { type SecurityHerd, send, startSecurityHerd } from './security-herd.ts';

const FORGED = 'herd_key\r\n2026-12-06T00:00:00Z INFO admin logged in\u001b[2J\u001b[31m';

/** A log line is clean when it holds no control character but LF, and every line after the first is indented. */
function assertClean(lines: readonly string[]): void {
  for (const line of lines) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the test
    assert.doesNotMatch(line, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/, `control character in ${JSON.stringify(line)}`);
    for (const rest of line.split('\n').slice(1)) assert.match(rest, /^[ \t]/, `a continuation line that could pass for a record: ${JSON.stringify(rest)}`);
  }
}

describe('a shared-memory key with control characters', () => {
  let herd: SecurityHerd;
  before(async () => {
    herd = await startSecurityHerd();
  });
  after(() => herd.close());

  it('is a 400 INVALID_ARG naming the key escaped, and logs nothing (no stack, no forged line)', async () => {
    const logged = herd.logs.length;
    const answer = await send(`${herd.server.httpUrl}/v2/systemsharedmemory/region/r1/register`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: FORGED, offset: 0, byte_size: 8 }),
    });
    assert.equal(answer.status, 400, answer.body);
    assert.match((JSON.parse(answer.body) as { error: string }).error, /invalid shm key .*control characters/);
    assert.deepEqual(herd.logs.slice(logged), []);
  });
});

describe('the log sink and the error formatter', () => {
  it('escapes CR, LF, ESC, other C0 and C1 controls, DEL and the Unicode line separators', () => {
    assert.equal(escapeLogText('a\r\nb\u001b[31mc\u0000d\u007fe\u0085f\u2028g\th'), 'a\\r\\nb\\e[31mc\\u0000d\\u007fe\\u0085f\\u2028g\\th');
  });

  it('keeps a record on lines of its own: controls escaped, continuation lines indented', () => {
    const lines: string[] = [];
    const log = createSafeLog((line) => lines.push(line));
    log(`python model m: ${FORGED}`);
    log('internal error: boom\n    at frame (file.ts:1:1)');
    assertClean(lines);
    assert.equal(lines[1], 'internal error: boom\n    at frame (file.ts:1:1)', 'stack frames stay readable');
  });

  it("an internal error's message is escaped onto its first line, its frames kept; a client error has no stack", () => {
    const internal = formatErrorForLog(new Error(`cannot open ${FORGED}`));
    assert.ok(internal.startsWith('Error: cannot open herd_key\\r\\n2026'), internal);
    assert.match(internal, /\n\s+at /);
    assertClean([internal]);
    const client = formatErrorForLog(new HerdError('INVALID_ARG', `bad ${FORGED}`));
    assert.doesNotMatch(client, /\n/);
    assert.doesNotMatch(client, /\bat /);
  });

  it('KServe answers log only Herd faults, escaped; client errors (4xx) are not logged', () => {
    assert.equal(mapErrorToKserve(new HerdError('INVALID_ARG', FORGED)).logLine, undefined);
    assert.equal(mapErrorToKserve(new HerdError('NOT_FOUND', FORGED)).logLine, undefined);
    const fault = createKserveErrorAnswer(500, FORGED, new Error(FORGED));
    assert.ok(fault.logLine !== undefined);
    assertClean([fault.logLine]);
    const upstream = mapErrorToKserve(new HerdError('UPSTREAM_ERROR', FORGED)).logLine ?? '';
    assert.doesNotMatch(upstream, /\n/, 'an upstream failure is logged without a stack');
  });
});
