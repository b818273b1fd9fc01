// inference.GRPCInferenceService's unary RPCs over the serving side: each handler converts the message,
// calls serving, and converts the answer; errors go through map-grpc-status.ts only.
import type { sendUnaryData, ServerUnaryCall, UntypedServiceImplementation } from '@grpc/grpc-js';
import { HerdError, invalidArg } from '../core/errors.ts';
import type { LogSettingUpdate } from '../serving/log-settings.ts';
import { convertModelConfigToJson } from '../serving/model-config/convert-model-config-to-json.ts';
import { readLoadParameters, type LoadParameters, type LoadParameterValue } from '../serving/repository/load-parameters.ts';
import { createServerMetadata } from '../serving/server-metadata.ts';
import { describeCudaSharedMemory, registerCudaSharedMemory } from '../serving/shared-memory/cuda-shared-memory.ts';
import { parseTraceSettingUpdate } from '../serving/trace-settings.ts';
import { convertGrpcInferRequest, parseGrpcVersion, resolveGrpcModel } from './convert-grpc-infer-request.ts';
import { convertGrpcInferResponse } from './convert-grpc-infer-response.ts';
import type { ModelInferRequestMessage } from './grpc-messages.ts';
import { convertErrorToServiceError } from './map-grpc-status.ts';
import { endGrpcTrace, type GrpcServiceDeps, servingTracingOf, startGrpcInferTrace } from './grpc-service-deps.ts';
import { type ServingTracing, withTraceIds } from '../serving/infer-trace.ts';
import { createStreamInferHandler } from './stream-infer-handler.ts';
import type { ApiGroup, ApiGroupGuard } from '../core/api-groups.ts';
import { checkGrpcApiGroup } from './grpc-api-guard.ts';
import { admitGrpcCaller } from './grpc-caller.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';

type Message = Record<string, unknown>;
type Handler = (request: Message, call: ServerUnaryCall<Message, unknown>) => unknown;

export function createGrpcInferenceService(deps: GrpcServiceDeps): UntypedServiceImplementation {
  const { inference, repository, sharedMemory: shm } = deps;
  const serverMetadata = createServerMetadata(deps.serverId);
  const tracing = servingTracingOf(deps);
  // Each method is checked against its Triton API group (grpc-api-guard.ts) before its handler runs.
  const unary = (group: ApiGroup, handler: Handler) => (call: ServerUnaryCall<Message, unknown>, callback: sendUnaryData<unknown>) => {
    const refusal = checkGrpcApiGroup(deps.apiGuard, group, call.metadata);
    if (refusal !== undefined) {
      callback(refusal, null);
      return;
    }
    try {
      const result = handler(call.request, call);
      if (result instanceof Promise)
        result.then(
          (value) => callback(null, value),
          (err: unknown) => fail(callback, err, deps.log),
        );
      else callback(null, result);
    } catch (err) {
      fail(callback, err, deps.log);
    }
  };
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
    ModelInfer: unary('inference', (r, unaryCall) => modelInfer(deps, tracing, r as unknown as ModelInferRequestMessage, unaryCall)),
    ModelStreamInfer: createStreamInferHandler(deps),
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
export function createHealthService(isReady: () => boolean, apiGuard?: ApiGroupGuard): UntypedServiceImplementation {
  return {
    Check: (call: ServerUnaryCall<Message, unknown>, callback: sendUnaryData<unknown>) => {
      const refusal = checkGrpcApiGroup(apiGuard, 'health', call.metadata);
      if (refusal !== undefined) callback(refusal, null);
      else callback(null, { status: isReady() ? 'SERVING' : 'NOT_SERVING' });
    },
  };
}

function fail(callback: sendUnaryData<unknown>, err: unknown, log: ((line: string) => void) | undefined): void {
  const error = convertErrorToServiceError(err);
  if (!(err instanceof HerdError)) log?.(withTraceIds(`internal error: ${formatErrorForLog(err)}`, err));
  callback(error, null);
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

/** ModelInfer: one request, traced when Triton's trace settings sample it (its parent from the call's metadata). */
async function modelInfer(deps: GrpcServiceDeps, tracing: ServingTracing, request: ModelInferRequestMessage, unaryCall: ServerUnaryCall<Message, unknown>) {
  const { inference, sharedMemory: shm } = deps;
  const model = resolveGrpcModel(inference, request);
  const caller = admitGrpcCaller(deps.callers, model, unaryCall.metadata, unaryCall.getPeer());
  const { call, outputRegions } = convertGrpcInferRequest(request, model, shm);
  if (caller !== undefined) call.caller = caller;
  const trace = startGrpcInferTrace(tracing, model.name, unaryCall.metadata);
  if (trace === undefined) return convertGrpcInferResponse(await inference.infer(call, model), outputRegions, shm);
  call.trace = trace;
  try {
    const answer = await inference.infer(call, model);
    trace.responseComplete();
    const response = convertGrpcInferResponse(answer, outputRegions, shm);
    endGrpcTrace(trace);
    return response;
  } catch (err) {
    endGrpcTrace(trace, err);
    throw err;
  }
}
