// Schema checks for rendered objects: built-in kinds through kubernetes-models (4.5.x: Node 20), the two custom
// resources (ServiceMonitor, KServe's ClusterServingRuntime) through shapes written here, since kubernetes-models
// carries no CRDs. Also the API versions Kubernetes removed, refused by name.
import { z } from 'zod';
import type { K8sObject } from './deploy-files.ts';
import { unknownFields } from './unknown-fields.ts';

/** API versions removed from Kubernetes (1.16 to 1.29): a manifest using one does not apply on a current cluster. */
export const REMOVED_API_VERSIONS = new Set([
  'extensions/v1beta1',
  'apps/v1beta1',
  'apps/v1beta2',
  'autoscaling/v2beta1',
  'autoscaling/v2beta2',
  'policy/v1beta1',
  'batch/v1beta1',
  'networking.k8s.io/v1beta1',
  'rbac.authorization.k8s.io/v1beta1',
  'storage.k8s.io/v1beta1',
  'discovery.k8s.io/v1beta1',
  'flowcontrol.apiserver.k8s.io/v1beta2',
]);

const BUILT_IN = new Set(['v1', 'apps/v1', 'batch/v1', 'policy/v1', 'autoscaling/v2', 'networking.k8s.io/v1']);

type Validatable = { validate(): void };
type ModelClass = new (data: object) => Validatable;

async function kubernetesModel(apiVersion: string, kind: string): Promise<ModelClass> {
  const module = (await import(`kubernetes-models/${apiVersion}`)) as Record<string, unknown>;
  const model = module[kind];
  if (typeof model !== 'function') throw new Error(`kubernetes-models has no ${kind} in ${apiVersion}`);
  return model as ModelClass;
}

/** Validates a value as a built-in type (e.g. a Container inside a custom resource); throws with the path. */
export async function validateAs(apiVersion: string, kind: string, value: object, where: string): Promise<void> {
  const Model = await kubernetesModel(apiVersion, kind);
  try {
    new Model(value).validate();
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`);
  }
  const unknown = unknownFields(apiVersion, kind, value);
  if (unknown.length > 0) throw new Error(`${where}: fields ${apiVersion} ${kind} does not have: ${unknown.join(', ')}`);
}

const metadata = z.looseObject({ name: z.string().min(1), labels: z.record(z.string(), z.string()).optional() });
const matchLabels = z.strictObject({ matchLabels: z.record(z.string(), z.string()) });

// monitoring.coreos.com/v1 ServiceMonitor: the fields used here (the operator's CRD has more, all optional).
const serviceMonitor = z.strictObject({
  apiVersion: z.literal('monitoring.coreos.com/v1'),
  kind: z.literal('ServiceMonitor'),
  metadata,
  spec: z.strictObject({
    selector: matchLabels,
    endpoints: z.array(z.strictObject({ port: z.string().min(1), path: z.string().startsWith('/'), interval: z.string().regex(/^\d+(ms|s|m|h)$/) })).min(1),
  }),
});

// serving.kserve.io/v1alpha1 ClusterServingRuntime: the fields KServe's own runtimes use.
const clusterServingRuntime = z.strictObject({
  apiVersion: z.literal('serving.kserve.io/v1alpha1'),
  kind: z.literal('ClusterServingRuntime'),
  metadata,
  spec: z.strictObject({
    annotations: z.record(z.string(), z.string()).optional(),
    supportedModelFormats: z
      .array(z.strictObject({ name: z.string(), version: z.string(), autoSelect: z.boolean().optional(), priority: z.number().int().min(1).optional() }))
      .min(1),
    protocolVersions: z.array(z.enum(['v1', 'v2', 'grpc-v1', 'grpc-v2'])).min(1),
    containers: z.array(z.looseObject({ name: z.string(), image: z.string() })).min(1),
    volumes: z.array(z.looseObject({ name: z.string() })).optional(),
  }),
});

/** Validates one object; throws a message naming it and the first problem. */
export async function validateObject(object: K8sObject): Promise<void> {
  const where = `${object.apiVersion} ${object.kind}/${object.metadata.name}`;
  if (REMOVED_API_VERSIONS.has(object.apiVersion)) throw new Error(`${where}: ${object.apiVersion} was removed from Kubernetes`);
  if (BUILT_IN.has(object.apiVersion)) return validateAs(object.apiVersion, object.kind, object, where);
  const shape = object.kind === 'ServiceMonitor' ? serviceMonitor : object.kind === 'ClusterServingRuntime' ? clusterServingRuntime : undefined;
  if (!shape) throw new Error(`${where}: no schema for this API version and kind`);
  const parsed = shape.safeParse(object);
  if (!parsed.success) throw new Error(`${where}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  if (object.kind === 'ClusterServingRuntime') {
    const spec = parsed.data.spec as { containers: object[]; volumes?: object[] };
    for (const [i, c] of spec.containers.entries()) await validateAs('v1', 'Container', c, `${where} containers[${i}]`);
    for (const [i, v] of (spec.volumes ?? []).entries()) await validateAs('v1', 'Volume', v, `${where} volumes[${i}]`);
  }
}
