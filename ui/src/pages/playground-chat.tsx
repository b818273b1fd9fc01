// The chat half of the playground: POST ../v1/chat/completions with stream: true (the session cookie and
// the CSRF header, no key), the text as it streams, then which deployment answered (x-herd-* headers)
// and the request's tokens and cost from ../admin/v1/requests/<id>.
import { useRef, useState } from 'preact/hooks';
import { api, messageOf, send } from '../api.ts';
import { ErrorNote, Loaded, Stats } from '../components.tsx';
import { count, money, ms, orDash } from '../format.ts';
import { useLoad } from '../hooks.ts';
import { readChatStream } from '../sse.ts';
import type { RequestDetailJson } from '../types.ts';

interface Message {
  role: 'user' | 'assistant';
  content: string;
}

interface Answered {
  model: string | null;
  provider: string | null;
  route: string | null;
  requestId: string | null;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  request?: RequestDetailJson;
  requestError?: string;
}

const pause = (msDelay: number) => new Promise((resolve) => setTimeout(resolve, msDelay));

/** The request is in the server's recent ring as soon as it settles; a few short retries cover the gap. */
async function readRequest(id: string): Promise<RequestDetailJson> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await api<RequestDetailJson>(`../admin/v1/requests/${encodeURIComponent(id)}`);
    } catch (error) {
      if (attempt >= 5) throw error;
      await pause(300);
    }
  }
}

export function ChatPlayground({ readOnly }: { readOnly: boolean }) {
  const models = useLoad((signal) => api<{ data: { id: string }[] }>('../admin/v1/models', { signal }), []);
  return (
    <section aria-labelledby="chat-heading">
      <h2 id="chat-heading">Chat</h2>
      <Loaded state={models} what="the models">
        {(list) => {
          const ids = list.data.map((m) => m.id);
          if (ids.length === 0) return <p class="muted">The gateway routes no model.</p>;
          return readOnly ? <p class="muted">Routed models: {ids.join(', ')}.</p> : <ChatForm models={ids} />;
        }}
      </Loaded>
    </section>
  );
}

function ChatForm({ models }: { models: string[] }) {
  const [model, setModel] = useState(models[0] ?? '');
  const [draft, setDraft] = useState('');
  const [messages, setMessages] = useState<Message[]>([]);
  const [streaming, setStreaming] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [answered, setAnswered] = useState<Answered | undefined>(undefined);
  const abort = useRef<AbortController | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    const history: Message[] = [...messages, { role: 'user', content: draft }];
    setMessages(history);
    setDraft('');
    setBusy(true);
    setError(undefined);
    setAnswered(undefined);
    setStreaming('');
    abort.current = new AbortController();
    let text = '';
    try {
      const body = { model, messages: history, stream: true, stream_options: { include_usage: true } };
      const response = await send('../v1/chat/completions', { method: 'POST', body, csrf: true, signal: abort.current.signal });
      const header = (name: string) => response.headers.get(name);
      const seen: Answered = { model: header('x-herd-model'), provider: header('x-herd-provider'), route: header('x-herd-route'), requestId: header('x-request-id') };
      setAnswered(seen);
      const usage = response.body ? await readChatStream(response.body, (t) => setStreaming((text = t))) : null;
      setMessages([...history, { role: 'assistant', content: text }]);
      setStreaming('');
      setAnswered({ ...seen, usage });
      if (seen.requestId) {
        const id = seen.requestId;
        readRequest(id)
          .then((request) => setAnswered({ ...seen, usage, request }))
          .catch((e: unknown) => setAnswered({ ...seen, usage, requestError: messageOf(e) }));
      }
    } catch (caught) {
      if (text) setMessages([...history, { role: 'assistant', content: text }]);
      setStreaming('');
      setError(caught instanceof DOMException && caught.name === 'AbortError' ? 'Stopped.' : messageOf(caught));
    } finally {
      setBusy(false);
      abort.current = null;
    }
  };

  return (
    <>
      <p class="muted">Routed models: {models.join(', ')}.</p>
      <Conversation messages={messages} streaming={streaming} />
      <form class="chat-form" onSubmit={submit}>
        <div class="field">
          <label for="chat-model">Model</label>
          <select id="chat-model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
            {models.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </div>
        <div class="field wide">
          <label for="chat-message">Message</label>
          <textarea id="chat-message" rows={3} required value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </div>
        <div class="form-actions">
          <button type="submit" disabled={busy || !model || draft.trim() === ''}>
            Send
          </button>
          <button type="button" disabled={!busy} onClick={() => abort.current?.abort()}>
            Stop
          </button>
          <button
            type="button"
            disabled={busy || messages.length === 0}
            onClick={() => {
              setMessages([]);
              setAnswered(undefined);
            }}
          >
            Clear conversation
          </button>
        </div>
      </form>
      <ErrorNote error={error} />
      {answered && <AnsweredBy answered={answered} />}
    </>
  );
}

/** The messages so far and the answer as it streams in (a live region: screen readers hear it). */
function Conversation({ messages, streaming }: { messages: Message[]; streaming: string }) {
  return (
    <ol class="conversation" aria-label="Conversation" aria-live="polite">
      {messages.map((m, i) => (
        // The conversation only grows: the index is each message's identity.
        <li key={i} class={`message ${m.role}`}>
          <strong>{m.role === 'user' ? 'You' : 'Assistant'}:</strong> <span class="text">{m.content}</span>
        </li>
      ))}
      {streaming && (
        <li class="message assistant">
          <strong>Assistant:</strong> <span class="text">{streaming}</span>
        </li>
      )}
    </ol>
  );
}

function AnsweredBy({ answered }: { answered: Answered }) {
  const r = answered.request;
  return (
    <section aria-labelledby="answered-heading">
      <h3 id="answered-heading">Last answer</h3>
      <Stats
        items={[
          ['Model', orDash(answered.model)],
          ['Provider', orDash(answered.provider)],
          ['Route', orDash(answered.route)],
          ['Request id', answered.requestId ? <a href={`#/requests/${encodeURIComponent(answered.requestId)}`}>{answered.requestId}</a> : '—'],
          ['Prompt tokens', count(r?.prompt_tokens ?? answered.usage?.prompt_tokens)],
          ['Completion tokens', count(r?.completion_tokens ?? answered.usage?.completion_tokens)],
          ['Cost', r ? money(r.cost_micros, r.currency) : '—'],
          ['Latency', r ? ms(r.latency_ms) : '—'],
        ]}
      />
      <ErrorNote error={answered.requestError && `Tokens and cost are not available: ${answered.requestError}`} />
    </section>
  );
}
