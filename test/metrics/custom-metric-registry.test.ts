// Custom metric families (pb_utils.MetricFamily's home): Triton's sharing and refusal rules, the
// exposition prom-client prints for them, and their removal when the last holder lets go.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Registry } from 'prom-client';
import { CustomMetricRegistry } from '../../src/metrics/custom-metric-registry.ts';

describe('CustomMetricRegistry', () => {
  it('shares a family by name and a series by labels; refuses another kind, a bad name, and Herd’s own names', async () => {
    const registry = new Registry();
    new Counter({ name: 'nv_inference_count', help: 'own', registers: [registry] });
    const custom = new CustomMetricRegistry(registry);
    const a = custom.acquireFamily('work_total', 'first description', 'counter');
    const b = custom.acquireFamily('work_total', 'second description', 'counter');
    assert.equal(a, b);
    assert.throws(() => custom.acquireFamily('work_total', 'x', 'gauge'), /Family name already exists with different type/);
    assert.throws(() => custom.acquireFamily('1bad', 'x', 'gauge'), /Invalid metric name/);
    assert.throws(() => custom.acquireFamily('nv_inference_count', 'x', 'counter'), /one of Herd's own metrics/);
    const s1 = a.acquire({ version: '1', model: 'm' }, undefined);
    const s2 = a.acquire({ model: 'm', version: '1' }, undefined);
    assert.equal(s1, s2, 'the same labels in any order are one series');
    a.increment(s1, 2);
    a.increment(s2, 0.5);
    assert.throws(() => a.increment(s1, -1), /can only be incremented monotonically/);
    assert.throws(() => a.set(s1, 1), /COUNTER does not support Set/);
    const text = await registry.metrics();
    assert.match(text, /# HELP work_total first description\n# TYPE work_total counter\nwork_total\{model="m",version="1"\} 2.5/);

    a.release(s1);
    assert.equal(a.value(s2), 2.5, 'still held once');
    a.release(s2);
    assert.equal(a.series.size, 0);
    custom.releaseFamily(a);
    assert.match(await registry.metrics(), /work_total/, 'one holder left');
    custom.releaseFamily(b);
    assert.doesNotMatch(await registry.metrics(), /work_total/);
    assert.equal(custom.get('work_total'), undefined);
  });

  it('prints a histogram as cumulative buckets, sum and count; checks its buckets', async () => {
    const registry = new Registry();
    const family = new CustomMetricRegistry(registry).acquireFamily('sizes', 'Sizes', 'histogram');
    assert.throws(() => family.acquire({}, undefined), /Missing required buckets/);
    assert.throws(() => family.acquire({}, [2, 1]), /strictly sorted/);
    assert.throws(() => family.acquire({ __x: 'y' }, [1]), /Invalid label name/);
    const series = family.acquire({ model: 'm' }, [1, 4]);
    for (const v of [0.5, 3, 9]) family.observe(series, v);
    assert.throws(() => family.value(series), /HISTOGRAM does not support Value/);
    const lines = (await registry.metrics()).split('\n');
    for (const line of [
      '# TYPE sizes histogram',
      'sizes_bucket{model="m",le="1"} 1',
      'sizes_bucket{model="m",le="4"} 2',
      'sizes_bucket{model="m",le="+Inf"} 3',
      'sizes_sum{model="m"} 12.5',
      'sizes_count{model="m"} 3',
    ]) {
      assert.ok(lines.includes(line), line);
    }
  });
});
