// Provider `type: triton`: a deployment whose upstream is a Triton model — of this Herd's repository
// (in process) or of a remote KServe server — that speaks the text_input/text_output contract; and
// embeddings from a model with a BYTES input and an FP32 output, one request per text, concurrently.
import { bridgeUnmodeled } from '../bridge-unmodeled.ts';
import { refuseCustomTools } from '../refuse-custom-tools.ts';
import type { AbortLink } from '../../../core/abort-link.ts';
import { HerdError } from '../../../core/errors.ts';
import type { InferencePortAnswer, InferencePortModel } from '../../../core/inference-port.ts';
import type { ChatChunk, ChatResponse, FinishReason, Usage } from '../../protocol/chat-types.ts';
import { convertUsageToOpenAI } from '../../wire/openai-chat/convert-usage-to-openai.ts';
import { countTokens } from '../../protocol/usage-estimate.ts';
import { createCompletionId, nowSeconds } from '../../wire/create-ids.ts';
import type { EmbedRequest, EmbedResult, Provider, ProviderRequest, ProviderResult, ProviderStreamEvent } from '../provider.ts';
import { UpstreamError } from '../../protocol/upstream-error.ts';
import { embedTexts } from './embed-texts.ts';
import { DEFAULT_PROMPT_TEMPLATE, parsePromptTemplateParameter, type PromptTemplate, renderChatPrompt } from './render-chat-prompt.ts';
import type { TritonCallOptions, TritonModelClient } from './triton-model-client.ts';
import { createTextRequest, decodeTextOutput, mapTritonFinishReason, readTextContract, type TextContract, type TextOutput, type TextRequest } from './triton-text-contract.ts';

export interface TritonProviderOptions {
  name: string;
  client: TritonModelClient;
  timeoutMs: number;
  /** herd.yaml's prompt_template per upstream model (deployments of this provider); wins over the model's parameter. */
  templates?: ReadonlyMap<string, PromptTemplate>;
}

export function createTritonProvider(options: TritonProviderOptions): Provider {
  return new TritonProvider(options);
}

/** `name` or `name:version` (a Triton model name never ends in `:<digits>`). */
export function parseUpstreamModel(upstreamModel: string): { model: string; version: number | undefined } {
  const match = /^(.+):(\d+)$/.exec(upstreamModel);
  return match ? { model: match[1] as string, version: Number(match[2]) } : { model: upstreamModel, version: undefined };
}

interface PreparedCall {
  model: string;
  version: number | undefined;
  info: InferencePortModel;
  contract: TextContract;
  prompt: string;
  text: TextRequest;
  call: TritonCallOptions;
}

class TritonProvider implements Provider {
  readonly name: string;
  private readonly client: TritonModelClient;
  private readonly timeoutMs: number;
  private readonly templates: ReadonlyMap<string, PromptTemplate>;

  constructor(options: TritonProviderOptions) {
    this.name = options.name;
    this.client = options.client;
    this.timeoutMs = options.timeoutMs;
    this.templates = options.templates ?? new Map();
  }

  async chat(req: ProviderRequest, signal: AbortLink): Promise<ProviderResult> {
    const prepared = await this.prepare(req, signal, false);
    const { info, call, text } = prepared;
    const request = { model: prepared.model, ...(prepared.version !== undefined ? { version: prepared.version } : {}), inputs: text.inputs, outputs: text.outputs };
    const answers: InferencePortAnswer[] = [];
    if (info.decoupled) {
      for await (const answer of this.client.stream(request, info, call)) answers.push(answer);
    } else {
      answers.push(await this.client.infer(request, info, call));
    }
    const output = this.combine(prepared.model, answers);
    const finishReason = mapTritonFinishReason(output.finishReason);
    const usage = await this.usage(prepared.prompt, output);
    const response: ChatResponse = {
      id: createCompletionId(),
      object: 'chat.completion',
      created: nowSeconds(),
      model: req.upstreamModel,
      choices: [{ index: 0, message: { role: 'assistant', content: output.text }, finish_reason: finishReason }],
      usage: convertUsageToOpenAI(usage),
    };
    return { response, usage, rawFinishReason: output.finishReason ?? null, warnings: text.warnings };
  }

  async *stream(req: ProviderRequest, signal: AbortLink): AsyncGenerator<ProviderStreamEvent> {
    const prepared = await this.prepare(req, signal, true);
    const { info, call, text } = prepared;
    if (text.warnings.length > 0) yield { type: 'warnings', warnings: text.warnings };
    const id = createCompletionId();
    const created = nowSeconds();
    const chunk = (delta: ChatChunk['choices'][number]['delta'], finish: FinishReason | null): ChatChunk => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model: req.upstreamModel,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const request = { model: prepared.model, ...(prepared.version !== undefined ? { version: prepared.version } : {}), inputs: text.inputs, outputs: text.outputs };
    const pieces: string[] = [];
    let inputTokens: number | undefined;
    let outputTokens: number | undefined;
    let rawReason: string | undefined;
    let first = true;
    // A model that is not decoupled answers once: that answer is the one chunk.
    for await (const answer of this.client.stream(request, info, call)) {
      const output = decodeTextOutput(this.name, prepared.model, answer);
      if (output.inputTokens !== undefined) inputTokens = output.inputTokens;
      if (output.outputTokens !== undefined) outputTokens = (outputTokens ?? 0) + output.outputTokens;
      if (output.finishReason !== undefined) rawReason = output.finishReason;
      if (output.text === '' && !first) continue;
      pieces.push(output.text);
      yield { type: 'chunk', chunk: chunk(first ? { role: 'assistant', content: output.text } : { content: output.text }, null) };
      first = false;
    }
    if (first) yield { type: 'chunk', chunk: chunk({ role: 'assistant', content: '' }, null) };
    const finishReason = mapTritonFinishReason(rawReason);
    yield { type: 'chunk', chunk: chunk({}, finishReason) };
    const usage = await this.usage(prepared.prompt, { text: pieces.join(''), finishReason: rawReason, inputTokens, outputTokens });
    yield { type: 'usage', usage };
    yield { type: 'done', finishReason, rawFinishReason: rawReason ?? null };
  }

  async embed(req: EmbedRequest, signal: AbortLink): Promise<EmbedResult> {
    const { model, version } = parseUpstreamModel(req.upstreamModel);
    const call: TritonCallOptions = { signal, timeoutMs: req.timeoutMs ?? this.timeoutMs, traceParent: req.traceParent };
    const info = await this.describe(model, version, call);
    return embedTexts({ provider: this.name, client: this.client, model, version, info, call }, req);
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private async describe(model: string, version: number | undefined, call: TritonCallOptions): Promise<InferencePortModel> {
    const info = await this.client.describe(model, version, call);
    if (info === undefined) {
      const which = version === undefined ? `'${model}'` : `'${model}' version ${version}`;
      throw new UpstreamError(`${this.name}: model ${which} is not loaded`, { provider: this.name, failure: 'unavailable' });
    }
    return info;
  }

  private async prepare(req: ProviderRequest, signal: AbortLink, stream: boolean): Promise<PreparedCall> {
    // Other tool settings are warnings (triton-text-contract.ts); a custom tool is refused like on Anthropic and Gemini.
    refuseCustomTools(req.request, 'A Triton text model');
    const dropped = bridgeUnmodeled(req, this.name);
    const { model, version } = parseUpstreamModel(req.upstreamModel);
    const call: TritonCallOptions = {
      signal,
      timeoutMs: req.timeoutMs ?? this.timeoutMs,
      traceParent: req.traceParent,
      ...(req.idleTimeoutMs !== undefined ? { idleTimeoutMs: req.idleTimeoutMs } : {}),
    };
    const info = await this.describe(model, version, call);
    const contract = readTextContract(this.name, info);
    let prompt: string;
    try {
      prompt = renderChatPrompt(req.request.messages, this.template(req.upstreamModel, info));
    } catch (err) {
      if (!(err instanceof HerdError)) throw err;
      throw new UpstreamError(`${this.name}: ${err.message}`, { provider: this.name, failure: 'invalid_request', cause: err });
    }
    const text = createTextRequest(contract, prompt, req.request, stream && contract.decoupled, this.name);
    if (dropped.length > 0) text.warnings.push(...dropped);
    return { model, version, info, contract, prompt, text, call };
  }

  /** herd.yaml's template for this deployment, else the model's prompt_template parameter, else plain. */
  private template(upstreamModel: string, info: InferencePortModel): PromptTemplate {
    const configured = this.templates.get(upstreamModel);
    if (configured !== undefined) return configured;
    const parameter = info.parameters['prompt_template'];
    if (parameter === undefined) return DEFAULT_PROMPT_TEMPLATE;
    try {
      return parsePromptTemplateParameter(info.name, parameter);
    } catch (err) {
      throw new UpstreamError(`${this.name}: ${(err as Error).message}`, { provider: this.name, failure: 'invalid_request', cause: err });
    }
  }

  /** A decoupled model's responses of a non-streamed call, as one. */
  private combine(model: string, answers: InferencePortAnswer[]): TextOutput {
    const pieces: string[] = [];
    const out: TextOutput = { text: '', finishReason: undefined, inputTokens: undefined, outputTokens: undefined };
    for (const answer of answers) {
      const output = decodeTextOutput(this.name, model, answer);
      pieces.push(output.text);
      out.finishReason = output.finishReason ?? out.finishReason;
      out.inputTokens = output.inputTokens ?? out.inputTokens;
      if (output.outputTokens !== undefined) out.outputTokens = (out.outputTokens ?? 0) + output.outputTokens;
    }
    if (answers.length === 0) throw new UpstreamError(`${this.name}: model '${model}' sent no response`, { provider: this.name, failure: 'malformed' });
    out.text = pieces.join('');
    return out;
  }

  /** The model's own counts where it reports them; Herd's tokenizer (estimated) for the rest. */
  private async usage(prompt: string, output: TextOutput): Promise<Usage> {
    const promptTokens = output.inputTokens ?? (await countTokens(prompt));
    const completionTokens = output.outputTokens ?? (await countTokens(output.text));
    const reported = output.inputTokens !== undefined || output.outputTokens !== undefined;
    return {
      promptTokens,
      cachedPromptTokens: 0,
      cacheWriteTokens: 0,
      completionTokens,
      reasoningTokens: 0,
      estimated: output.inputTokens === undefined || output.outputTokens === undefined,
      raw: reported ? { num_input_tokens: output.inputTokens, num_output_tokens: output.outputTokens } : undefined,
    };
  }
}
