// The fake batch upstreams' deterministic answers: the same request always gets the same text and the same
// token counts, which tests recompute (fakeTokens) to check what Herd billed.
import { isObject } from './fake-batch-server.ts';

/** About four bytes a token, at least one: enough for billing checks to compare exact numbers. */
export function fakeTokens(text: string): number {
  return Math.max(1, Math.ceil(Buffer.byteLength(text) / 4));
}

/** The prompt a request carries, as the text counted for its prompt tokens. */
export function fakePromptText(body: Record<string, unknown>): string {
  return JSON.stringify(body.messages ?? body.input ?? body.prompt ?? '') + (typeof body.system === 'string' ? body.system : JSON.stringify(body.system ?? ''));
}

/** The answer's text: the last user text, echoed (strings or text blocks). */
export function fakeReplyText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  const content = isObject(last) ? last.content : undefined;
  const text = typeof content === 'string' ? content : Array.isArray(content) ? content.map((b) => (isObject(b) && typeof b.text === 'string' ? b.text : '')).join('') : '';
  return `echo: ${text}`;
}

export function fakeChatCompletion(body: Record<string, unknown>, n: number): Record<string, unknown> {
  const content = fakeReplyText(body);
  const prompt = fakeTokens(fakePromptText(body));
  const completion = fakeTokens(content);
  return {
    id: `chatcmpl-fake${n}`,
    object: 'chat.completion',
    created: 1_760_000_000,
    model: body.model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    system_fingerprint: 'fp_fake',
  };
}

export function fakeEmbeddings(body: Record<string, unknown>): Record<string, unknown> {
  const inputs = Array.isArray(body.input) ? body.input.map(String) : [String(body.input ?? '')];
  const prompt = inputs.reduce((sum, text) => sum + fakeTokens(text), 0);
  return {
    object: 'list',
    data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: [text.length / 100, index / 10, 0.5] })),
    model: body.model,
    usage: { prompt_tokens: prompt, total_tokens: prompt },
  };
}

export function fakeAnthropicMessage(params: Record<string, unknown>, n: number): Record<string, unknown> {
  const text = fakeReplyText(params);
  return {
    id: `msg_fake${n}`,
    type: 'message',
    role: 'assistant',
    model: params.model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: fakeTokens(fakePromptText(params)), output_tokens: fakeTokens(text), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}
