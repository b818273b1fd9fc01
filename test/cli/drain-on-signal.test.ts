// The drain's sequence on a stand-in server, with mocked timers (nothing waits): SIGTERM fails readiness at
// once and closes the listeners only after the grace; SIGINT closes at once; the exit timeout and a second
// signal flush the ledger and exit 1; a clean close exits 0 and cancels the exit timeout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDrainHandler } from '../../src/cli/drain-on-signal.ts';

function standIn(closes: 'resolve' | 'hang') {
  const events: string[] = [];
  let exited: (code: number) => void = () => undefined;
  const exit = new Promise<number>((resolve) => {
    exited = resolve;
  });
  const server = {
    beginDrain: () => void events.push('beginDrain'),
    close: () => {
      events.push('close');
      return closes === 'resolve' ? Promise.resolve() : new Promise<void>(() => undefined);
    },
    flushLedger: async () => void events.push('flushLedger'),
  };
  const lines: string[] = [];
  const io = {
    say: (line: string) => void lines.push(line),
    exit: (code: number) => {
      events.push(`exit ${code}`);
      exited(code);
    },
  };
  return { server, io, events, lines, exit };
}

test('SIGTERM: readiness first, listeners close after the grace, exit 0 once all is answered', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const s = standIn('resolve');
  const onSignal = createDrainHandler(s.server, { graceSecs: 5, exitTimeoutSecs: 30 }, s.io);
  onSignal('SIGTERM');
  assert.deepEqual(s.events, ['beginDrain']);
  assert.match(s.lines[0] as string, /^SIGTERM received: draining: \/v2\/health\/ready answers 503, listeners keep answering for 5s/);
  t.mock.timers.tick(4_999);
  assert.deepEqual(s.events, ['beginDrain']);
  t.mock.timers.tick(1);
  assert.equal(await s.exit, 0);
  assert.deepEqual(s.events, ['beginDrain', 'close', 'exit 0']);
  assert.match(s.lines[1] as string, /^drain grace over: listeners closed \(gRPC GOAWAY sent\); waiting up to 25s/);
  assert.equal(s.lines[2], 'all requests answered; ledger flushed; exiting 0');
  t.mock.timers.tick(60_000);
  assert.deepEqual(s.events, ['beginDrain', 'close', 'exit 0'], 'the exit timeout was cancelled');
});

test('SIGINT closes the listeners at once; the grace is longer than the exit timeout: clamped', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const a = standIn('resolve');
  createDrainHandler(a.server, { graceSecs: 5, exitTimeoutSecs: 30 }, a.io)('SIGINT');
  assert.equal(await a.exit, 0);
  assert.deepEqual(a.events, ['beginDrain', 'close', 'exit 0']);
  const b = standIn('hang');
  createDrainHandler(b.server, { graceSecs: 60, exitTimeoutSecs: 10 }, b.io)('SIGTERM');
  assert.match(b.lines[0] as string, /keep answering for 10s/);
});

test('the exit timeout, with requests still running: ledger flushed, exit 1', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const s = standIn('hang');
  createDrainHandler(s.server, { graceSecs: 0, exitTimeoutSecs: 30 }, s.io)('SIGTERM');
  assert.deepEqual(s.events, ['beginDrain', 'close']);
  t.mock.timers.tick(30_000);
  assert.equal(await s.exit, 1);
  assert.deepEqual(s.events, ['beginDrain', 'close', 'flushLedger', 'exit 1']);
  assert.match(s.lines.join('\n'), /exit timeout of 30s reached with requests still running/);
});

test('a second signal: ledger flushed, exit 1 at once, without waiting for the grace or the requests', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const s = standIn('hang');
  const onSignal = createDrainHandler(s.server, { graceSecs: 5, exitTimeoutSecs: 30 }, s.io);
  onSignal('SIGTERM');
  onSignal('SIGINT');
  assert.equal(await s.exit, 1);
  assert.deepEqual(s.events, ['beginDrain', 'flushLedger', 'exit 1']);
  assert.match(s.lines[1] as string, /^SIGINT again: exiting now without waiting for in-flight requests/);
  onSignal('SIGTERM');
  t.mock.timers.tick(60_000);
  assert.deepEqual(s.events, ['beginDrain', 'flushLedger', 'exit 1'], 'nothing after the exit');
});
