// Answers a stub's BLS call (InferenceRequest.exec / async_exec in model.py) by running it through the
// serving side's inference, so a Python model can call any model Herd serves, with no network hop.
import { HerdError, toHerdError } from '../../../core/errors.ts';
import type { Parameters, Tensor } from '../../../core/tensor.ts';
import { mapHerdErrorCode } from './triton-error-codes.ts';
import { decodeStubTensors, encodeStubTensors } from './convert-stub-tensors.ts';
import type { StubFrame, StubHeader } from './stub-wire.ts';
import type { InferTraceParent } from '../../infer-trace.ts';

export interface BlsCall {
  modelName: string;
  version?: number;
  id: string;
  parameters: Parameters;
  inputs: Tensor[];
  outputs: { name: string }[];
  /** The calling request's compute span when it is traced: the call's trace hangs from it, as in Triton. */
  trace?: InferTraceParent;
}

export interface BlsAnswer {
  outputs: Tensor[];
  parameters?: Parameters;
}

/** The slice of InferenceService a BLS call needs; app.ts plugs the real one in. */
export interface BlsInference {
  infer(call: BlsCall): Promise<BlsAnswer>;
  /** exec(decoupled=True): every response of the called model, ending with `final`. */
  streamInfer(call: BlsCall, signal?: AbortSignal): AsyncIterable<{ answer?: BlsAnswer; error?: HerdError; final: boolean }>;
}

export type SendToStub = (header: StubHeader, parts?: readonly Uint8Array[]) => void;

/** `signal` aborts a decoupled call when the model cancels its response iterator. */
export async function answerBlsCall(
  frame: StubFrame,
  inference: BlsInference | undefined,
  send: SendToStub,
  label: string,
  signal?: AbortSignal,
  trace?: InferTraceParent,
): Promise<void> {
  const h = frame.header;
  const call = h['call'];
  try {
    if (!inference) throw new HerdError('UNAVAILABLE', 'BLS is not available in this server');
    const modelName = h['model'];
    if (typeof modelName !== 'string' || !modelName) throw new HerdError('INVALID_ARG', 'BLS request has no model_name');
    const version = typeof h['version'] === 'number' && h['version'] >= 0 ? h['version'] : undefined;
    const inputs = decodeStubTensors(h['inputs'], frame.body, `python model ${label} BLS request`);
    const blsCall: BlsCall = {
      modelName,
      ...(version !== undefined ? { version } : {}),
      id: typeof h['id'] === 'string' ? h['id'] : '',
      parameters: parseBlsParameters(h['parameters'], h['correlation_id'], h['flags']),
      inputs,
      outputs: Array.isArray(h['outputs']) ? h['outputs'].map((name) => ({ name: String(name) })) : [],
    };
    if (trace !== undefined) blsCall.trace = trace;
    if (h['decoupled'] === true) {
      for await (const event of inference.streamInfer(blsCall, signal)) {
        if (event.answer) sendAnswer(send, call, event.answer, event.final);
        else if (event.error) sendError(send, call, event.error, event.final);
        else send({ type: 'bls_response', call, final: true, empty: true });
      }
      return;
    }
    sendAnswer(send, call, await inference.infer(blsCall), true);
  } catch (err) {
    sendError(send, call, toHerdError(err), true);
  }
}

function sendAnswer(send: SendToStub, call: unknown, answer: BlsAnswer, final: boolean): void {
  const encoded = encodeStubTensors(answer.outputs);
  send(
    {
      type: 'bls_response',
      call,
      final,
      outputs: encoded.descriptors,
      ...(answer.parameters ? { parameters: JSON.stringify(answer.parameters) } : {}),
    },
    encoded.parts,
  );
}

function sendError(send: SendToStub, call: unknown, error: HerdError, final: boolean): void {
  send({ type: 'bls_response', call, final, error: { message: error.message, code: mapHerdErrorCode(error.code) } });
}

function parseBlsParameters(value: unknown, correlationId: unknown, flags: unknown): Parameters {
  const out: Parameters = {};
  if (typeof value === 'string' && value) {
    const parsed = JSON.parse(value) as Record<string, unknown>;
    for (const [key, v] of Object.entries(parsed)) {
      if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') out[key] = v;
    }
  }
  if ((typeof correlationId === 'number' && correlationId !== 0) || (typeof correlationId === 'string' && correlationId !== '')) {
    out['sequence_id'] = correlationId;
  }
  // TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1, _END = 2.
  if (typeof flags === 'number' && flags & 1) out['sequence_start'] = true;
  if (typeof flags === 'number' && flags & 2) out['sequence_end'] = true;
  return out;
}
