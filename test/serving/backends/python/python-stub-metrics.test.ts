// One stub's custom metric operations, as herd_stub_metrics.py sends them, against the server's registry.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CustomMetricRegistry } from '../../../../src/metrics/custom-metric-registry.ts';
import { PythonStubMetrics } from '../../../../src/serving/backends/python/python-stub-metrics.ts';

describe('PythonStubMetrics', () => {
  it("applies a stub's operations in order, answers its questions, and releases everything when the stub ends", () => {
    const custom = new CustomMetricRegistry();
    const logged: string[] = [];
    const stub = new PythonStubMetrics(custom, (line) => logged.push(line));
    const replies: unknown[] = [];
    const reply = (h: unknown) => replies.push(h);
    stub.handle({ type: 'metrics', ask: 1, ops: [{ op: 'family', id: 1, name: 'g', description: 'G', kind: 'gauge' }] }, reply);
    stub.handle(
      {
        type: 'metrics',
        ops: [
          { op: 'metric', id: 2, family: 1, labels: { a: 'b' } },
          { op: 'set', id: 2, value: 5 },
          { op: 'inc', id: 2, value: -2 },
        ],
      },
      reply,
    );
    stub.handle(
      {
        type: 'metrics',
        ask: 2,
        ops: [
          { op: 'inc', id: 2, value: 1 },
          { op: 'value', id: 2 },
        ],
      },
      reply,
    );
    stub.handle({ type: 'metrics', ask: 3, ops: [{ op: 'observe', id: 2, values: [1] }] }, reply);
    stub.handle({ type: 'metrics', ops: [{ op: 'inc', id: 99, value: 1 }] }, reply);
    assert.deepEqual(replies, [
      { type: 'metrics_reply', ask: 1 },
      { type: 'metrics_reply', ask: 2, value: 4 },
      { type: 'metrics_reply', ask: 3, error: 'TRITONSERVER_METRIC_KIND_GAUGE does not support Observe' },
    ]);
    assert.deepEqual(logged, ["custom metric operation 'inc' failed: Metric has been invalidated."]);
    assert.equal(custom.get('g')?.series.size, 1);
    stub.release();
    assert.equal(custom.get('g'), undefined);
  });
});
