// Triton mode's trace file as tracer.cc writes it: the objects per trace id, one JSON array per file, the
// un-indexed file closed at shutdown, log-frequency rotation to file.0, file.1, … and the early write of a used-up count.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { formatTritonTrace, type TritonTraceRecord, TritonTraceFile, TritonTraceLog } from '../../src/serving/triton-trace-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'herd-triton-trace-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const STAMPS = ['REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END', 'REQUEST_END'];
function record(id: number, extra: Partial<TritonTraceRecord> = {}): TritonTraceRecord {
  return { id, model_name: 'simple', model_version: 1, timestamps: STAMPS.map((name, i) => ({ name, ns: 1_000_000_000_000n + BigInt(id * 100 + i) })), ...extra };
}

test("one request's objects, as Triton streams them: frontend stamps first, the model header at REQUEST_START", () => {
  const root = record(1, {
    request_id: 'req-7',
    timestamps: [
      { name: 'HTTP_RECV_START', ns: 10n },
      { name: 'HTTP_RECV_END', ns: 11n },
      { name: 'REQUEST_START', ns: 12n },
      { name: 'REQUEST_END', ns: 20n },
      { name: 'HTTP_SEND_START', ns: 21n },
      { name: 'HTTP_SEND_END', ns: 22n },
    ],
  });
  const step = record(2, {
    model_name: 'add',
    parent_id: 1,
    timestamps: [{ name: 'REQUEST_START', ns: 13n }],
    tensors: [{ activity: 'TENSOR_QUEUE_INPUT', name: 'INPUT0', data: '1,2', shape: [1, 2], datatype: 'INT32' }],
  });
  assert.equal(
    formatTritonTrace([root, step]),
    [
      '{"id":1,"timestamps":[{"name":"HTTP_RECV_START","ns":10}]}',
      '{"id":1,"timestamps":[{"name":"HTTP_RECV_END","ns":11}]}',
      '{"id":1,"model_name":"simple","model_version":1,"request_id":"req-7"}',
      '{"id":1,"timestamps":[{"name":"REQUEST_START","ns":12}]}',
      '{"id":1,"timestamps":[{"name":"REQUEST_END","ns":20}]}',
      '{"id":1,"timestamps":[{"name":"HTTP_SEND_START","ns":21}]}',
      '{"id":1,"timestamps":[{"name":"HTTP_SEND_END","ns":22}]}',
      '{"id":2,"model_name":"add","model_version":1,"parent_id":1}',
      '{"id":2,"timestamps":[{"name":"REQUEST_START","ns":13}]}',
      '{"id":2,"activity":"TENSOR_QUEUE_INPUT","tensor":{"name":"INPUT0","data":"1,2","shape":"1,2","dtype":"INT32"}}',
    ].join(','),
  );
});

/** What Triton's trace_summary.py does first: objects grouped by id, timestamps gathered by name. */
function summarize(objects: Record<string, unknown>[]): Map<number, { model?: unknown; stamps: Record<string, number> }> {
  const byId = new Map<number, { model?: unknown; stamps: Record<string, number> }>();
  for (const o of objects) {
    const entry = byId.get(o['id'] as number) ?? { stamps: {} };
    if ('model_name' in o) entry.model = o['model_name'];
    for (const t of (o['timestamps'] as { name: string; ns: number }[] | undefined) ?? []) entry.stamps[t.name] = t.ns;
    byId.set(o['id'] as number, entry);
  }
  return byId;
}

test('without a log frequency every trace goes to the file itself, one JSON array closed at shutdown', () => {
  const path = join(dir, 'all.json');
  const file = new TritonTraceFile(path);
  const counts = { count: -1, seen: 3 };
  const log = new TritonTraceLog(file, 0, counts);
  for (const id of [1, 2, 3]) log.write([record(id)]);
  assert.equal(existsSync(path), false, 'Triton keeps them until the setting ends');
  log.flush();
  log.write([record(4)]);
  log.flush();
  file.close();
  const objects = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>[];
  const traces = summarize(objects);
  assert.deepEqual([...traces.keys()], [1, 2, 3, 4]);
  const first = traces.get(1);
  assert.equal(first?.model, 'simple');
  assert.equal((first?.stamps['REQUEST_END'] ?? 0) - (first?.stamps['REQUEST_START'] ?? 0), 6);
  assert.equal(existsSync(`${path}.0`), false);
});

test('log frequency N writes each N traces to file.0, file.1, …; the rest at shutdown to the next one', () => {
  const path = join(dir, 'rotated.json');
  const file = new TritonTraceFile(path);
  const log = new TritonTraceLog(file, 2, { count: -1, seen: 5 });
  for (const id of [1, 2, 3, 4, 5]) log.write([record(id)]);
  const ids = (name: string) => (JSON.parse(readFileSync(name, 'utf8')) as { id: number }[]).map((o) => o.id).filter((id, i, all) => all.indexOf(id) === i);
  assert.deepEqual(
    [ids(`${path}.0`), ids(`${path}.1`)],
    [
      [1, 2],
      [3, 4],
    ],
  );
  assert.equal(existsSync(`${path}.2`), false);
  log.flush();
  file.close();
  assert.deepEqual(ids(`${path}.2`), [5]);
  assert.equal(existsSync(path), false, 'with a log frequency the un-indexed file is never written');
});

test('a used-up count writes its traces at once to the next indexed file (when every counted request was traced)', () => {
  const path = join(dir, 'counted.json');
  const file = new TritonTraceFile(path);
  const counts = { count: 1, seen: 1 };
  const log = new TritonTraceLog(file, 0, counts);
  log.write([record(1)]);
  assert.equal(existsSync(`${path}.0`), false);
  counts.count = 0;
  counts.seen = 2;
  log.write([record(2)]);
  assert.equal(JSON.parse(readFileSync(`${path}.0`, 'utf8')).length, 2 * (STAMPS.length + 1));
});

test('an unwritable path is logged, not thrown', () => {
  const lines: string[] = [];
  const file = new TritonTraceFile(join(dir, 'no', 'such', 'dir', 'x.json'), (line) => lines.push(line));
  file.save('{}', true);
  assert.match(lines[0] ?? '', /^failed creating trace file: /);
});
