// inference.GRPCInferenceService's unary RPCs over the serving side: each handler converts the message,
// calls serving, and converts the answer; errors go through map-grpc-status.ts only.
import { HerdError, invalidArg } from '../core/errors.ts';
import type { LogSettingUpdate } from '../serving/log-settings.ts';
import { convertModelConfigToJson } from '../serving/model-config/convert-model-config-to-json.ts';
import { readLoadParameters, type LoadParameters, type LoadParameterValue } from '../serving/repository/load-parameters.ts';
import { createServerMetadata } from '../serving/server-metadata.ts';
import { describeCudaSharedMemory, registerCudaSharedMemory } from '../serving/shared-memory/cuda-shared-memory.ts';
import { parseTraceSettingUpdate } from '../serving/trace-settings.ts';
import { parseGrpcVersion } from './convert-grpc-infer-request.ts';
import type { GrpcServiceDeps } from './grpc-service-deps.ts';
import { withTraceIds } from '../serving/infer-trace.ts';
import type { ApiGroup } from '../core/api-groups.ts';
import type { CallMetadata } from './grpc-call-metadata.ts';
import type { AbortLink } from '../core/abort-link.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';

export type Message = Record<string, unknown>;

/** What a handler sees of its call. */
export interface GrpcCallContext {
  metadata: CallMetadata;
  getPeer(): string;
  /** Fires when the client cancels, the stream closes early or the deadline passes. */
  signal: AbortLink;
}

/** A unary RPC: the Triton API group it belongs to (checked before it runs) and its handler. */
export interface UnaryMethod {
  group: ApiGroup;
  run: (request: Message, call: GrpcCallContext) => unknown;
}

/** Every unary method of GRPCInferenceService except ModelInfer (its own hot path, model-infer-route.ts). */
export function createGrpcInferenceService(deps: GrpcServiceDeps): Record<string, UnaryMethod> {
  const { inference, repository, sharedMemory: shm } = deps;
  const serverMetadata = createServerMetadata(deps.serverId);
  const unary = (group: ApiGroup, run: UnaryMethod['run']): UnaryMethod => ({ group, run });
  const version = (request: Message) => parseGrpcVersion(String(request['version'] ?? ''));
  const name = (request: Message) => String(request['name'] ?? '');

  return {
    ServerLive: unary('health', () => ({ live: true })),
    ServerReady: unary('health', () => ({ ready: deps.isReady() })),
    ModelReady: unary('health', (r) => ({ ready: inference.isModelReady(name(r), version(r)) })),
    ServerMetadata: unary('metadata', () => serverMetadata),
    ModelMetadata: unary('metadata', (r) => inference.metadata(name(r), version(r))),
    ModelConfig: unary('model-config', (r) => ({ config: convertModelConfigToJson(inference.config(name(r), version(r))) })),
    ModelStatistics: unary('statistics', (r) => ({ model_stats: inference.statistics(name(r) || undefined, name(r) ? version(r) : undefined) })),
    RepositoryIndex: unary('model-repository', (r) => ({ models: repository.index(r['ready'] === true) })),
    RepositoryModelLoad: unary('model-repository', async (r) => {
      await repository.load(String(r['model_name'] ?? ''), parseLoadParameters(r['parameters'] as Record<string, Message> | undefined));
      return {};
    }),
    RepositoryModelUnload: unary('model-repository', async (r) => {
      await repository.unload(String(r['model_name'] ?? ''));
      return {};
    }),
    SystemSharedMemoryStatus: unary('shared-memory', (r) => ({
      regions: Object.fromEntries(shm.status(name(r)).map((s) => [s.name, s])),
    })),
    SystemSharedMemoryRegister: unary('shared-memory', (r) => {
      shm.register(name(r), String(r['key'] ?? ''), Number(r['offset'] ?? 0), Number(r['byte_size'] ?? 0));
      return {};
    }),
    SystemSharedMemoryUnregister: unary('shared-memory', (r) => {
      shm.unregister(name(r));
      return {};
    }),
    CudaSharedMemoryStatus: unary('shared-memory', (r) => ({ regions: Object.fromEntries(describeCudaSharedMemory(name(r)).map((s) => [s.name, s])) })),
    CudaSharedMemoryRegister: unary('shared-memory', (r) => registerCudaSharedMemory(name(r))),
    CudaSharedMemoryUnregister: unary('shared-memory', () => ({})),
    TraceSetting: unary('trace', (r) => {
      const model = String(r['model_name'] ?? '');
      if (model !== '' && !inference.isModelReady(model)) throw invalidArg(`Request for unknown model : ${model}`);
      const settings = r['settings'] as Record<string, { value: string[] }> | undefined;
      const update = Object.fromEntries(Object.entries(settings ?? {}).map(([k, v]) => [k, v.value ?? []]));
      const current =
        Object.keys(update).length > 0 ? deps.traceSettings.update(parseTraceSettingUpdate(update, 'grpc'), model || undefined) : deps.traceSettings.get(model || undefined);
      // A key answered twice (one `resource` per attribute) is one list, as Triton's response map gathers it.
      const answer: Record<string, { value: string[] }> = {};
      for (const [key, values] of current) (answer[key] ??= { value: [] }).value.push(...values);
      return { settings: answer };
    }),
    LogSettings: unary('logging', (r) => {
      const settings = r['settings'] as Record<string, Message & { parameter_choice?: string }> | undefined;
      const update: LogSettingUpdate = {};
      for (const [key, value] of Object.entries(settings ?? {})) {
        const choice = value.parameter_choice;
        update[key] = choice === undefined ? '' : (value[choice] as string | number | boolean);
      }
      const current = Object.keys(update).length > 0 ? deps.logSettings.update(update) : deps.logSettings.get();
      return {
        settings: {
          log_file: { string_param: current.log_file },
          log_info: { bool_param: current.log_info },
          log_warning: { bool_param: current.log_warning },
          log_error: { bool_param: current.log_error },
          log_verbose_level: { uint32_param: current.log_verbose_level },
          log_format: { string_param: current.log_format },
        },
      };
    }),
  };
}

/** grpc.health.v1.Health/Check: SERVING while the server is ready. */
export function createHealthCheck(isReady: () => boolean): UnaryMethod {
  return { group: 'health', run: () => ({ status: isReady() ? 'SERVING' : 'NOT_SERVING' }) };
}

/** A failure as its status; anything not a HerdError is logged (the client sees INTERNAL). */
export function logUnexpectedError(err: unknown, log: ((line: string) => void) | undefined): void {
  if (!(err instanceof HerdError)) log?.(withTraceIds(`internal error: ${formatErrorForLog(err)}`, err));
}

/** RepositoryModelLoad's parameters map (ModelRepositoryParameter oneofs) as the serving side's one rule reads them. */
function parseLoadParameters(parameters: Record<string, Message> | undefined): LoadParameters {
  const entries = Object.entries(parameters ?? {}).map(([name, parameter]): [string, LoadParameterValue] => {
    const choice = parameter['parameter_choice'];
    if (choice === 'string_param') return [name, { kind: 'string', value: String(parameter['string_param']) }];
    const bytes = parameter['bytes_param'];
    if (choice === 'bytes_param' && bytes instanceof Uint8Array) return [name, { kind: 'bytes', value: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) }];
    return [name, { kind: 'other' }];
  });
  return readLoadParameters(entries, { string: 'string_param', bytes: 'bytes_param' });
}
