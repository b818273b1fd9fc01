// deploy/kubernetes rendered as a cluster would get it (`kubectl kustomize` of each overlay) and checked offline:
// every object against the Kubernetes schemas, no removed API versions, probes on Herd's health routes, the
// container args against `herd --help`, shutdown timing, security, secrets by reference, and the autoscaling chain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { KSERVE_RUNTIME, type K8sObject, OVERLAYS, kubectlMissing, readObjects, renderOverlay, unknownFlags } from './helpers/deploy-files.ts';
import { validateObject } from './helpers/manifest-schemas.ts';
import { type Container, type PodSpec, allContainers, byKind, one, podTemplate } from './helpers/pod-spec.ts';

const skip = kubectlMissing() ?? false;
const rendered = new Map<string, K8sObject[]>();
function overlay(dir: string): K8sObject[] {
  let objects = rendered.get(dir);
  if (!objects) rendered.set(dir, (objects = renderOverlay(dir)));
  return objects;
}
const workloadOf = (dir: string) => [...byKind(overlay(dir), 'Deployment'), ...byKind(overlay(dir), 'StatefulSet')][0] as K8sObject;
const herdConfigOf = (objects: K8sObject[]) => {
  const cm = byKind(objects, 'ConfigMap').find((c) => c.metadata.name.startsWith('herd-config-'));
  return parse((cm?.data as Record<string, string> | undefined)?.['herd.yaml'] ?? '') as {
    server: { exit_timeout_secs?: number; drain_grace_secs?: number; http_port?: number };
  };
};

test('every overlay renders and every object passes the Kubernetes schemas; no removed API version', { skip }, async () => {
  for (const dir of OVERLAYS) {
    const objects = overlay(dir);
    assert.ok(objects.length > 5, `${dir} rendered ${objects.length} objects`);
    for (const object of objects) await validateObject(object);
  }
  for (const object of readObjects(KSERVE_RUNTIME)) await validateObject(object);
});

test('the validators refuse what they should: a wrong type, a removed API version, an unknown ServiceMonitor field', async () => {
  const broken = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'x' },
    spec: { selector: {}, template: { spec: { containers: [{ name: 'c', ports: [{ containerPort: '8000' }] }] } } },
  };
  await assert.rejects(validateObject(broken), /containerPort must be integer/);
  await assert.rejects(validateObject({ apiVersion: 'autoscaling/v2beta2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'x' } }), /was removed/);
  await assert.rejects(validateObject({ apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', metadata: { name: 'x' } }), /was removed/);
  const monitor = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: 'x' },
    spec: { selector: { matchLabels: {} }, endpoints: [{ port: 'metrics', path: '/metrics', interval: '15s', intervall: '1s' }] },
  };
  await assert.rejects(validateObject(monitor), /intervall/);
  const typo = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'x' },
    spec: { selector: {}, template: { spec: { containers: [{ name: 'c', readinessprobe: {} }] } } },
  };
  await assert.rejects(validateObject(typo), /Deployment\.spec\.template\.spec\.containers\[0\]\.readinessprobe/);
});

test('postgres overlay: a Deployment and its migrations Job; sqlite overlay: a StatefulSet with a volume per pod that migrates first', { skip }, () => {
  const pg = overlay(OVERLAYS[0]);
  assert.equal(byKind(pg, 'StatefulSet').length, 0);
  const job = one(pg, 'Job', 'herd-migrate');
  assert.deepEqual(podTemplate(job).spec.containers[0]?.args, ['herd', 'migrate', '--config', '/etc/herd/herd.yaml']);
  assert.equal((job.metadata.annotations as Record<string, string>)['argocd.argoproj.io/hook'], 'PreSync');
  // docs/deploy.md applies `-l 'app.kubernetes.io/component in (config,migrate)'` first: that set must run alone.
  const firstStep = pg.filter((o) => ['config', 'migrate'].includes(String((o.metadata.labels as Record<string, string> | undefined)?.['app.kubernetes.io/component'])));
  assert.deepEqual(firstStep.map((o) => o.kind).sort(), ['ConfigMap', 'Job']);
  const jobPod = podTemplate(job).spec as PodSpec & { serviceAccountName?: string };
  assert.equal(jobPod.serviceAccountName, undefined, 'the ServiceAccount is not applied in the first step');
  for (const volume of jobPod.volumes ?? []) {
    if (volume.configMap)
      assert.ok(
        firstStep.some((o) => o.kind === 'ConfigMap' && o.metadata.name === volume.configMap?.name),
        volume.name,
      );
  }
  assert.match(String((herdConfigOf(pg) as { billing?: { ledger?: string } }).billing?.ledger), /^\$\{DATABASE_URL\}$/);

  const sq = overlay(OVERLAYS[1]);
  assert.equal(byKind(sq, 'Deployment').length, 0);
  assert.equal(byKind(sq, 'Job').length, 0, 'a Job cannot reach a pod’s own volume: sqlite migrates in an init container');
  const set = one(sq, 'StatefulSet', 'herd');
  const claims = (set.spec as { volumeClaimTemplates: { metadata: { name: string } }[] }).volumeClaimTemplates.map((c) => c.metadata.name);
  assert.deepEqual(claims, ['data']);
  const pod = podTemplate(set).spec;
  assert.deepEqual(pod.initContainers?.[0]?.args, ['herd', 'migrate', '--config', '/etc/herd/herd.yaml']);
  assert.ok(pod.containers[0]?.volumeMounts?.some((m) => m.name === 'data' && m.mountPath === '/data'));
  assert.equal(
    pod.volumes?.some((v) => v.name === 'data'),
    false,
    'the data volume comes from the claim template, not an emptyDir',
  );
  assert.match(String((herdConfigOf(sq) as { billing?: { ledger?: string } }).billing?.ledger), /^sqlite:\/data\//);
});

function portNumber(container: Container, port: string | number): number | undefined {
  return typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
}

test('probes: liveness /v2/health/live, readiness /v2/health/ready, a startupProbe sized for model loading, on the HTTP port', { skip }, () => {
  for (const dir of OVERLAYS) {
    const herd = podTemplate(workloadOf(dir)).spec.containers[0] as Container;
    const httpPort = herdConfigOf(overlay(dir)).server.http_port ?? 8000;
    assert.equal(herd.livenessProbe?.httpGet?.path, '/v2/health/live', dir);
    assert.equal(herd.readinessProbe?.httpGet?.path, '/v2/health/ready', dir);
    assert.match(herd.startupProbe?.httpGet?.path ?? '', /^\/v2\/health\/(live|ready)$/, dir);
    for (const probe of [herd.livenessProbe, herd.readinessProbe, herd.startupProbe]) {
      assert.equal(portNumber(herd, probe?.httpGet?.port ?? -1), httpPort, `${dir}: a probe on another port than http (${httpPort})`);
    }
    const startupBudget = (herd.startupProbe?.periodSeconds ?? 10) * (herd.startupProbe?.failureThreshold ?? 3);
    assert.ok(startupBudget >= 120, `${dir}: startupProbe allows ${startupBudget} s for loading models`);
    assert.deepEqual(
      herd.ports?.map((p) => [p.name, p.containerPort]),
      [
        ['http', 8000],
        ['grpc', 8001],
        ['metrics', 8002],
      ],
    );
  }
});

test('container args name only commands and flags the real CLI has (herd --help, now)', { skip }, () => {
  const invocations = OVERLAYS.flatMap((dir) =>
    [...byKind(overlay(dir), 'Deployment'), ...byKind(overlay(dir), 'StatefulSet'), ...byKind(overlay(dir), 'Job')].flatMap((w) => allContainers(podTemplate(w).spec)),
  );
  const runtime = readObjects(KSERVE_RUNTIME)[0] as K8sObject;
  invocations.push(...(runtime.spec as { containers: Container[] }).containers);
  const unknown = [...new Set(invocations.flatMap((c) => unknownFlags(c.args ?? [])))];
  assert.deepEqual(unknown, []);
});

test('the KServe runtime is Triton’s (kserve-tritonserver) with the image swapped', () => {
  const runtime = readObjects(KSERVE_RUNTIME)[0] as K8sObject;
  const [container] = (runtime.spec as { containers: Container[] }).containers;
  assert.deepEqual(container?.args, ['tritonserver', '--model-store=/mnt/models', '--grpc-port=9000', '--http-port=8080', '--allow-grpc=true', '--allow-http=true']);
  assert.equal(container?.name, 'kserve-container');
  assert.match(container?.image ?? '', /\/herd:/);
  assert.equal(container?.securityContext?.readOnlyRootFilesystem, true);
  assert.deepEqual(container?.volumeMounts?.map((m) => m.mountPath).sort(), ['/data', '/tmp']);
});

/** Seconds a preStop `sleep N` holds the pod before SIGTERM. */
function preStopSeconds(container: Container): number {
  const command = container.lifecycle?.preStop?.exec?.command ?? [];
  return command[0] === 'sleep' ? Number(command[1]) : 0;
}

test('terminationGracePeriodSeconds covers preStop + --exit-timeout-secs (the drain grace inside it) + a margin', { skip }, () => {
  for (const dir of OVERLAYS) {
    const pod = podTemplate(workloadOf(dir)).spec;
    const herd = pod.containers[0] as Container;
    const flag = herd.args?.find((a) => a.startsWith('--exit-timeout-secs='));
    const config = herdConfigOf(overlay(dir)).server;
    const exitTimeout = flag ? Number(flag.split('=')[1]) : (config.exit_timeout_secs ?? 30);
    // On SIGTERM Herd answers 503 on readiness and keeps serving for the drain grace, then lets in-flight work
    // finish; it exits at --exit-timeout-secs after the signal, the grace included.
    const drainGrace = config.drain_grace_secs ?? 5;
    assert.ok(drainGrace < exitTimeout, `${dir}: the drain grace (${drainGrace} s) leaves no time for in-flight requests`);
    const readinessNotice = (herd.readinessProbe?.periodSeconds ?? 10) * (herd.readinessProbe?.failureThreshold ?? 3);
    assert.ok(readinessNotice < drainGrace, `${dir}: readiness notices a drain after ${readinessNotice} s, past the ${drainGrace} s grace`);
    assert.ok(preStopSeconds(herd) > 0, `${dir}: a preStop hook lets the endpoints drop the pod before SIGTERM`);
    const needed = preStopSeconds(herd) + exitTimeout + 5;
    assert.ok((pod.terminationGracePeriodSeconds ?? 30) >= needed, `${dir}: terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds} < ${needed}`);
  }
});

function checkSecurity(where: string, pod: PodSpec): void {
  assert.equal(pod.securityContext?.runAsNonRoot, true, where);
  assert.equal(pod.securityContext?.runAsUser, 1000, where);
  assert.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault', where);
  assert.equal(pod.automountServiceAccountToken, false, where);
  for (const c of allContainers(pod)) {
    assert.equal(c.securityContext?.readOnlyRootFilesystem, true, `${where} ${c.name}`);
    assert.equal(c.securityContext?.allowPrivilegeEscalation, false, `${where} ${c.name}`);
    assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL'], `${where} ${c.name}`);
    assert.ok(c.resources?.requests?.cpu && c.resources.requests.memory && c.resources.limits?.memory, `${where} ${c.name}: requests and a memory limit`);
    const writable = (c.volumeMounts ?? []).filter((m) => !m.readOnly).map((m) => m.mountPath);
    assert.deepEqual(writable.sort(), ['/data', '/tmp'], `${where} ${c.name}: writable only /data and /tmp`);
    assert.match(c.image, /^[\w.-]+(:\d+)?\/[\w./-]+:[\w.-]+$/, `${where} ${c.name}: an image with registry and tag`);
    assert.doesNotMatch(c.image, /:latest$/);
  }
}

test('securityContext, resources and writable mounts of every pod', { skip }, () => {
  for (const dir of OVERLAYS) {
    for (const w of [...byKind(overlay(dir), 'Deployment'), ...byKind(overlay(dir), 'StatefulSet'), ...byKind(overlay(dir), 'Job')]) {
      checkSecurity(`${dir} ${w.kind}`, podTemplate(w).spec);
    }
  }
});

test('secrets are referenced, never rendered: connection URLs and the master key from existing Secrets', { skip }, () => {
  for (const dir of OVERLAYS) {
    const objects = overlay(dir);
    assert.equal(byKind(objects, 'Secret').length, 0, `${dir} renders a Secret`);
    const herd = podTemplate(workloadOf(dir)).spec.containers[0] as Container;
    const fromSecret = new Map((herd.env ?? []).map((e) => [e.name, e.valueFrom?.secretKeyRef?.name]));
    assert.equal(fromSecret.get('HERD_MASTER_KEY'), 'herd-master-key');
    assert.ok(herd.envFrom?.some((e) => e.secretRef?.name === 'herd-upstream-keys'));
    for (const e of herd.env ?? []) assert.equal(e.value, undefined, `${dir}: ${e.name} has a literal value`);
    if (dir.endsWith('postgres')) {
      assert.equal(fromSecret.get('DATABASE_URL'), 'herd-connections');
      assert.equal(fromSecret.get('REDIS_URL'), 'herd-connections');
    }
    const text = JSON.stringify(objects);
    assert.doesNotMatch(text, /postgres:\/\/[^$"]*@|sk-[A-Za-z0-9]{8,}/, `${dir}: a credential in the manifests`);
    const images = [...byKind(objects, 'Deployment'), ...byKind(objects, 'StatefulSet'), ...byKind(objects, 'Job')].flatMap((w) =>
      allContainers(podTemplate(w).spec).map((c) => c.image),
    );
    assert.deepEqual(
      images.filter((i) => /postgres|redis/.test(i)),
      [],
      'no bundled database',
    );
  }
});
