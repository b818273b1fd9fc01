// A small server-sent-events reader for fetch bodies (EventSource cannot POST): splits events on blank
// lines and yields each event's joined data lines. No DOM, so the unit tests run it under Node.

/** Feeds text chunks in, takes complete events' data out; keeps a partial event for the next chunk. */
export class SseSplitter {
  private buffer = '';
  /** A chunk's last '\r' waits: it may be the first half of a '\r\n' split across chunks. */
  private carriage = '';

  push(text: string): string[] {
    let raw = this.carriage + text;
    this.carriage = raw.endsWith('\r') ? '\r' : '';
    if (this.carriage) raw = raw.slice(0, -1);
    this.buffer += raw.replace(/\r\n?/g, '\n');
    const out: string[] = [];
    let end = this.buffer.indexOf('\n\n');
    while (end >= 0) {
      const data = dataOf(this.buffer.slice(0, end));
      if (data !== undefined) out.push(data);
      this.buffer = this.buffer.slice(end + 2);
      end = this.buffer.indexOf('\n\n');
    }
    return out;
  }

  /** What is left when the body ends (an event without its closing blank line). */
  flush(): string[] {
    this.carriage = '';
    const data = dataOf(this.buffer);
    this.buffer = '';
    return data === undefined ? [] : [data];
  }
}

function dataOf(event: string): string | undefined {
  const lines = event
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''));
  return lines.length === 0 ? undefined : lines.join('\n');
}

export interface ChatChunk {
  choices?: { delta?: { content?: string | null; reasoning_content?: string | null } }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

/** One OpenAI chat-completions stream: the text so far and the usage, updated chunk by chunk. */
export async function readChatStream(body: ReadableStream<Uint8Array>, onText: (text: string) => void): Promise<ChatChunk['usage']> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const splitter = new SseSplitter();
  let text = '';
  let usage: ChatChunk['usage'] = null;
  const take = (events: string[]): boolean => {
    for (const data of events) {
      if (data === '[DONE]') return true;
      const chunk = JSON.parse(data) as ChatChunk;
      if (chunk.error?.message) throw new Error(chunk.error.message);
      const delta = chunk.choices?.[0]?.delta?.content;
      if (delta) onText((text += delta));
      if (chunk.usage) usage = chunk.usage;
    }
    return false;
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      take(splitter.flush());
      return usage;
    }
    if (take(splitter.push(decoder.decode(value, { stream: true })))) {
      await reader.cancel().catch(() => {});
      return usage;
    }
  }
}
