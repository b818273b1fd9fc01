// Rebuilds the chat.completion a stream delivered, from its chunks, so a streamed answer can be
// cached like a non-streamed one (and replayed either way). Deltas concatenate as OpenAI's SDK
// accumulates them: text fields appended, tool calls merged by index.
import type { ChatChoice, ChatChunk, ChatResponse, ChatUsage, ToolCall } from '../protocol/chat-types.ts';

interface ChoiceDraft {
  index: number;
  role: boolean;
  content: string | null;
  refusal: string | null;
  reasoning: string | null;
  /** `arguments` holds a custom call's input. */
  toolCalls: Array<{ id: string; custom: boolean; name: string; arguments: string }>;
  finishReason: ChatChoice['finish_reason'];
  logprobs: { content: unknown[] | null; refusal: unknown[] | null } | undefined;
}

export class ChatResponseAssembler {
  private head: ChatChunk | undefined;
  private usage: ChatUsage | undefined;
  private readonly choices = new Map<number, ChoiceDraft>();

  add(chunk: ChatChunk): void {
    this.head ??= chunk;
    if (chunk.usage) this.usage = chunk.usage;
    for (const part of chunk.choices) {
      const draft = this.draft(part.index);
      const delta = part.delta;
      if (delta.role !== undefined) draft.role = true;
      if (typeof delta.content === 'string') draft.content = (draft.content ?? '') + delta.content;
      if (typeof delta.refusal === 'string') draft.refusal = (draft.refusal ?? '') + delta.refusal;
      if (typeof delta.reasoning_content === 'string') draft.reasoning = (draft.reasoning ?? '') + delta.reasoning_content;
      for (const call of delta.tool_calls ?? []) {
        const slot = (draft.toolCalls[call.index] ??= { id: '', custom: false, name: '', arguments: '' });
        if (call.id) slot.id = call.id;
        if (call.type === 'custom' || call.custom !== undefined) slot.custom = true;
        const named = call.function?.name ?? call.custom?.name;
        if (named) slot.name = named;
        const piece = call.function?.arguments ?? call.custom?.input;
        if (piece) slot.arguments += piece;
      }
      if (part.finish_reason !== null) draft.finishReason = part.finish_reason;
      if (isLogprobs(part.logprobs)) {
        draft.logprobs ??= { content: null, refusal: null };
        if (part.logprobs.content) draft.logprobs.content = [...(draft.logprobs.content ?? []), ...part.logprobs.content];
        if (part.logprobs.refusal) draft.logprobs.refusal = [...(draft.logprobs.refusal ?? []), ...part.logprobs.refusal];
      }
    }
  }

  /**
   * The completion so far; `usage` (from the stream's result: the client may not have asked for the
   * usage chunk) wins over any usage chunk seen. Error when the stream carried no choice, or a choice
   * never got its role or a tool call its id or name.
   */
  build(usage: ChatUsage | undefined = this.usage): ChatResponse | Error {
    const head = this.head;
    if (head === undefined || this.choices.size === 0) return new Error('the stream carried no choice');
    const choices: ChatChoice[] = [];
    for (const draft of [...this.choices.values()].sort((a, b) => a.index - b.index)) {
      if (!draft.role) return new Error(`choice ${draft.index} never got a role`);
      const message: ChatChoice['message'] = { role: 'assistant', content: draft.content };
      if (draft.refusal !== null) message.refusal = draft.refusal;
      if (draft.reasoning !== null) message.reasoning_content = draft.reasoning;
      if (draft.toolCalls.length > 0) {
        const calls: ToolCall[] = [];
        for (const [i, call] of draft.toolCalls.entries()) {
          if (call === undefined || call.id === '' || call.name === '') return new Error(`choice ${draft.index} tool call ${i} is incomplete`);
          calls.push(
            call.custom
              ? { id: call.id, type: 'custom', custom: { name: call.name, input: call.arguments } }
              : { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } },
          );
        }
        message.tool_calls = calls;
      }
      const choice: ChatChoice = { index: draft.index, message, finish_reason: draft.finishReason };
      if (draft.logprobs !== undefined) choice.logprobs = draft.logprobs;
      choices.push(choice);
    }
    const response: ChatResponse = { id: head.id, object: 'chat.completion', created: head.created, model: head.model, choices };
    if (usage !== undefined) response.usage = usage;
    if (head.system_fingerprint !== undefined) response.system_fingerprint = head.system_fingerprint;
    return response;
  }

  private draft(index: number): ChoiceDraft {
    let draft = this.choices.get(index);
    if (draft === undefined) {
      draft = { index, role: false, content: null, refusal: null, reasoning: null, toolCalls: [], finishReason: null, logprobs: undefined };
      this.choices.set(index, draft);
    }
    return draft;
  }
}

function isLogprobs(value: unknown): value is { content?: unknown[] | null; refusal?: unknown[] | null } {
  return typeof value === 'object' && value !== null;
}
