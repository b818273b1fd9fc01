// Typed views of the pod-level fields the deploy tests read. Objects reach these only after kubernetes-models
// validated them, so the casts narrow what the schema already guaranteed.
import type { K8sObject } from './deploy-files.ts';

export type Probe = { httpGet?: { path: string; port: string | number }; periodSeconds?: number; failureThreshold?: number; timeoutSeconds?: number };
export type SecretRef = { name: string; key: string };
export type Container = {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  ports?: { name?: string; containerPort: number }[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] }; runAsNonRoot?: boolean };
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: SecretRef } }[];
  envFrom?: { secretRef?: { name: string } }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
};
export type PodSpec = {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  terminationGracePeriodSeconds?: number;
  automountServiceAccountToken?: boolean;
  volumes?: { name: string; emptyDir?: object; configMap?: { name: string }; persistentVolumeClaim?: { claimName: string; readOnly?: boolean } }[];
};
export type PodTemplate = { metadata?: { labels?: Record<string, string> }; spec: PodSpec };

/** The pod template of a Deployment, StatefulSet or Job. */
export function podTemplate(object: K8sObject): PodTemplate {
  const spec = object.spec as { template?: PodTemplate } | undefined;
  if (!spec?.template) throw new Error(`${object.kind}/${object.metadata.name} has no pod template`);
  return spec.template;
}

export function byKind(objects: readonly K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

export function one(objects: readonly K8sObject[], kind: string, name?: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0] as K8sObject;
}

/** Every container of a pod spec, init containers included. */
export function allContainers(pod: PodSpec): Container[] {
  return [...(pod.initContainers ?? []), ...pod.containers];
}

/** Whether every key=value of the selector is among the labels. */
export function selects(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  return selector !== undefined && Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}
