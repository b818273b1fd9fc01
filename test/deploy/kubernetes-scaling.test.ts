// The objects around the workload: Service and PDB select its pods, the NetworkPolicy opens its ports, the
// ServiceMonitor scrapes the metrics port, and the HPA's metrics are the prometheus-adapter rules' names, built
// from metrics Herd really registers (src/metrics).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { type K8sObject, OVERLAYS, kubectlMissing, renderOverlay } from './helpers/deploy-files.ts';
import { byKind, one, podTemplate, selects } from './helpers/pod-spec.ts';

const skip = kubectlMissing() ?? false;
const rendered = new Map<string, K8sObject[]>();
function overlay(dir: string): K8sObject[] {
  let objects = rendered.get(dir);
  if (!objects) rendered.set(dir, (objects = renderOverlay(dir)));
  return objects;
}
const workloadOf = (objects: K8sObject[]) => [...byKind(objects, 'Deployment'), ...byKind(objects, 'StatefulSet')][0] as K8sObject;
type AdapterRule = { seriesQuery: string; name: { matches: string; as: string }; metricsQuery: string };

/** Every metric name src/metrics registers (`name: '…'`). */
function registeredMetrics(): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync('src/metrics')) {
    for (const m of readFileSync(join('src/metrics', file), 'utf8').matchAll(/name: '([a-z_]+)'/g)) names.add(m[1] as string);
  }
  return names;
}

test('Service, PodDisruptionBudget, NetworkPolicy and ServiceMonitor select the Herd pods and their ports', { skip }, () => {
  for (const dir of OVERLAYS) {
    const objects = overlay(dir);
    const labels = podTemplate(workloadOf(objects)).metadata?.labels;
    const service = one(objects, 'Service', 'herd').spec as { selector: Record<string, string>; ports: { name: string; port: number; targetPort: string }[] };
    assert.ok(selects(service.selector, labels), `${dir}: the Service selects no Herd pod`);
    assert.deepEqual(
      service.ports.map((p) => [p.name, p.port, p.targetPort]),
      [
        ['http', 8000, 'http'],
        ['grpc', 8001, 'grpc'],
        ['metrics', 8002, 'metrics'],
      ],
    );
    const pdb = one(objects, 'PodDisruptionBudget').spec as { selector: { matchLabels: Record<string, string> }; maxUnavailable?: number };
    assert.ok(selects(pdb.selector.matchLabels, labels), `${dir}: the PDB selects no Herd pod`);
    assert.equal(pdb.maxUnavailable, 1, 'one pod at a time, and a one-pod StatefulSet can still be drained');

    const policy = one(objects, 'NetworkPolicy').spec as { podSelector: { matchLabels: Record<string, string> }; ingress: { ports: { port: number }[] }[]; policyTypes: string[] };
    assert.ok(selects(policy.podSelector.matchLabels, labels));
    assert.deepEqual(policy.policyTypes, ['Ingress', 'Egress']);
    assert.deepEqual(policy.ingress.flatMap((r) => r.ports.map((p) => p.port)).sort(), [8000, 8001, 8002]);

    const monitor = one(objects, 'ServiceMonitor').spec as { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path: string }[] };
    assert.ok(selects(monitor.selector.matchLabels, one(objects, 'Service', 'herd').metadata.labels as Record<string, string>), 'the ServiceMonitor selects the Service');
    assert.deepEqual(
      monitor.endpoints.map((e) => [e.port, e.path]),
      [['metrics', '/metrics']],
    );
  }
});

test('HPA (autoscaling/v2) scales the Deployment on the adapter rules’ metrics, built from metrics Herd registers', { skip }, () => {
  const objects = overlay(OVERLAYS[0]);
  const hpa = one(objects, 'HorizontalPodAutoscaler', 'herd');
  assert.equal(hpa.apiVersion, 'autoscaling/v2');
  const spec = hpa.spec as { scaleTargetRef: { kind: string; name: string }; minReplicas: number; metrics: { type: string; pods: { metric: { name: string } } }[] };
  assert.deepEqual(spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: workloadOf(objects).metadata.name });
  assert.ok(spec.minReplicas >= 2, 'at least two replicas, so a drain never empties the Service');

  const rulesMap = one(objects, 'ConfigMap', 'herd-prometheus-adapter-rules').data as Record<string, string>;
  const rules = (parse(rulesMap['config.yaml'] ?? '') as { rules: AdapterRule[] }).rules;
  const exposed = rules.map((r) => r.name.as);
  assert.deepEqual(
    spec.metrics.map((m) => m.pods.metric.name),
    exposed,
    'each HPA metric is one an adapter rule exposes',
  );
  const registered = registeredMetrics();
  for (const rule of rules) {
    const used = [...`${rule.seriesQuery} ${rule.metricsQuery}`.matchAll(/\b((?:nv|herd)_[a-z_]+?)(?:_sum|_count|_bucket)?\{/g)].map((m) => m[1] as string);
    assert.ok(used.length > 0, rule.name.as);
    for (const name of used) assert.ok(registered.has(name), `${rule.name.as} reads ${name}, which src/metrics does not register`);
    assert.match(rule.metricsQuery, /<<\.LabelMatchers>>/);
    assert.match(rule.metricsQuery, /by \(<<\.GroupBy>>\)/);
  }
  // Triton's rule: queue time per request, from the queue-duration and success counters.
  assert.match(rules[0]?.metricsQuery ?? '', /nv_inference_queue_duration_us.*nv_inference_request_success/);
});

test('the sqlite overlay has no HPA: each pod would be a separate Herd with its own keys and ledger', { skip }, () => {
  const objects = overlay(OVERLAYS[1]);
  assert.equal(byKind(objects, 'HorizontalPodAutoscaler').length, 0);
  assert.equal((workloadOf(objects).spec as { replicas: number }).replicas, 1);
});
