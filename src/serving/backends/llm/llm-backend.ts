// The `llm` backend: a Triton model whose execution is a gateway chat call through core's ChatPort.
// Requests of one execution run concurrently (an upstream takes no tensor batches); an instance is one
// call slot, so instance_group count bounds a model's concurrent calls. A decoupled model streams: one
// response per text delta, then a final response carrying the finish reason, token counts and cost.
import type { ChatPort, ChatPortResult } from '../../../core/chat-port.ts';
import { cancelled, HerdError, toHerdError } from '../../../core/errors.ts';
import type { Tensor } from '../../../core/tensor.ts';
import type { Backend, BackendFactory, BackendLoadContext, InferenceRequest, InferenceResult, ResponseSender } from '../backend.ts';
import { formatTraceParent, isValidTraceParent } from '../../../tracing/index.ts';
import { convertLlmRequest, type LlmCall } from './convert-llm-request.ts';
import { autoCompleteLlmConfig, parseLlmDefaults, type LlmDefaults } from './llm-model-config.ts';

/** `port()` is read per call: the gateway starts after the repository has loaded its models. */
export function createLlmBackend(port: () => ChatPort | undefined): BackendFactory {
  return {
    name: 'llm',
    autoCompleteConfig: async (config) => autoCompleteLlmConfig(config),
    async load(context: BackendLoadContext): Promise<Backend> {
      return new LlmInstance(context, parseLlmDefaults(context.config), port);
    },
    // Every llm model calls an upstream that may be paid; the load has parsed its parameters already.
    describeSpending: (config) => ({ ownKey: parseLlmDefaults(config).keyEnv !== undefined }),
  };
}

const encoder = new TextEncoder();

class LlmInstance implements Backend {
  private readonly origin: string;

  constructor(
    private readonly context: BackendLoadContext,
    private readonly defaults: LlmDefaults,
    private readonly port: () => ChatPort | undefined,
  ) {
    this.origin = `triton:${context.config.name}/${context.version}`;
  }

  /** The ledger's name for the caller: `triton:chat/1` called directly, `triton:smart_chat/chat:1` as an ensemble's step. */
  private originOf(request: InferenceRequest): string {
    if (request.ensemble === undefined) return this.origin;
    return `triton:${request.ensemble}/${this.context.config.name}:${this.context.version}`;
  }

  execute(requests: InferenceRequest[]): Promise<InferenceResult[]> {
    return Promise.all(requests.map((request) => this.complete(request)));
  }

  async executeDecoupled(requests: InferenceRequest[]): Promise<void> {
    await Promise.all(requests.map((request) => this.answerDecoupled(request)));
  }

  async unload(): Promise<void> {}

  /** The call a request asks for; a request that does not convert is refused, named. */
  private convert(request: InferenceRequest): LlmCall | HerdError {
    try {
      const call = convertLlmRequest(request, this.defaults, this.originOf(request));
      if (request.caller !== undefined) call.chat.caller = request.caller;
      // A traced request's compute span is the parent of the gateway operation and its upstream attempts.
      const parent = request.trace?.context();
      if (isValidTraceParent(parent)) {
        call.chat.traceparent = formatTraceParent(parent);
        if (parent.traceState !== undefined) call.chat.traceState = parent.traceState;
      }
      return call;
    } catch (err) {
      return this.named(err);
    }
  }

  /** The gateway's chat flow, or the refusal when there is none. */
  private chatPort(): ChatPort | HerdError {
    return this.port() ?? new HerdError('UNAVAILABLE', `llm model '${this.context.config.name}' cannot call an LLM: the gateway is not configured (herd.yaml names no models)`);
  }

  // The backend's own refusals are worded with the model's name where they are made; only what comes
  // back from the conversion and the gateway is named by named().
  private async complete(request: InferenceRequest): Promise<InferenceResult> {
    const call = this.convert(request);
    if (call instanceof HerdError) return { ok: false, error: call };
    if (call.stream)
      return { ok: false, error: new HerdError('INVALID_ARG', `llm model '${request.modelName}' is not decoupled: streaming needs model_transaction_policy { decoupled: true }`) };
    const port = this.chatPort();
    if (port instanceof HerdError) return { ok: false, error: port };
    // The client going away aborts the upstream call; the gateway settles what it used.
    if (request.signal !== undefined) call.chat.signal = request.signal;
    try {
      const result = await port.complete(call.chat);
      return { ok: true, outputs: createOutputs(call, result, (call.prependInput ? call.prompt : '') + result.text) };
    } catch (err) {
      return { ok: false, error: request.signal?.aborted ? cancelled() : this.named(err) };
    }
  }

  private async answerDecoupled(request: InferenceRequest): Promise<void> {
    const sender = request.responseSender as ResponseSender;
    const refuse = (error: HerdError) => {
      if (!sender.closed) sender.send({ ok: false, error }, true);
    };
    const call = this.convert(request);
    if (call instanceof HerdError) return refuse(call);
    const port = this.chatPort();
    if (port instanceof HerdError) return refuse(port);
    try {
      call.chat.signal = sender.signal;
      if (!call.stream) {
        const result = await port.complete(call.chat);
        sender.send({ ok: true, outputs: createOutputs(call, result, (call.prependInput ? call.prompt : '') + result.text) }, true);
        return;
      }
      for await (const event of port.stream(call.chat)) {
        if (sender.closed) break;
        if (event.type === 'delta') sender.send({ ok: true, outputs: [textTensor(event.text)] });
        else sender.send({ ok: true, outputs: createOutputs(call, event.result, '') }, true);
      }
      if (!sender.closed) sender.close();
    } catch (err) {
      refuse(this.named(err));
    }
  }

  /** Gateway and conversion errors keep their code; the message says which model called. */
  private named(err: unknown): HerdError {
    const error = toHerdError(err);
    return new HerdError(error.code, `llm model '${this.context.config.name}': ${error.message}`, { cause: error, retryAfterSeconds: error.retryAfterSeconds });
  }
}

function textTensor(text: string): Tensor {
  return { name: 'text_output', datatype: 'BYTES', shape: [1], data: [encoder.encode(text)] };
}

function createOutputs(call: LlmCall, result: ChatPortResult, text: string): Tensor[] {
  const outputs = [textTensor(text)];
  if (call.want.finishReason) outputs.push({ name: 'finish_reason', datatype: 'BYTES', shape: [1], data: [encoder.encode(result.finishReason)] });
  if (call.want.inputTokens) outputs.push({ name: 'num_input_tokens', datatype: 'UINT32', shape: [1], data: Uint32Array.of(result.usage.promptTokens) });
  if (call.want.outputTokens) outputs.push({ name: 'num_output_tokens', datatype: 'UINT32', shape: [1], data: Uint32Array.of(result.usage.completionTokens) });
  if (call.want.cost) outputs.push({ name: 'cost', datatype: 'FP64', shape: [1], data: Float64Array.of((result.cost?.micros ?? 0) / 1e6) });
  return outputs;
}
