// A fake OpenAI upstream for ledger tests: each request's prompt carries `marker N`, the answer reports
// 1000 + N completion tokens (so a ledger row names its request), and the markers `hold` picks are never
// answered (a call in flight when the server is killed).
import { sendJson, startMockUpstream, type MockUpstream, type RecordedRequest } from '../gateway/helpers/mock-upstream.ts';

export const markerOf = (req: RecordedRequest) => Number(/marker (\d+)/.exec(JSON.stringify(req.body))?.[1] ?? -1);

export async function startMarkerUpstream(hold: (marker: number) => boolean = () => false): Promise<MockUpstream & { held(): number[] }> {
  const held: number[] = [];
  const upstream = await startMockUpstream(async (req, res) => {
    const marker = markerOf(req);
    if (hold(marker)) {
      held.push(marker);
      return; // never answered: the socket closes when the server dies
    }
    const usage = { prompt_tokens: 10, completion_tokens: 1000 + marker, total_tokens: 1010 + marker };
    if (!(req.body as { stream?: boolean }).stream) {
      sendJson(res, 200, {
        id: `c-${marker}`,
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4.1',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage,
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id: `c-${marker}`, object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.write(chunk({ role: 'assistant', content: 'o' }, null));
    await new Promise((r) => setImmediate(r));
    res.end(
      `${chunk({ content: 'k' }, 'stop')}data: ${JSON.stringify({ id: `c-${marker}`, object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [], usage })}\n\ndata: [DONE]\n\n`,
    );
  });
  return Object.assign(upstream, { held: () => [...held] });
}

/** One chat request through Herd; whether the client got a complete 200 answer (a stream up to [DONE]). */
export async function askMarker(url: string, marker: number, secret: string, stream: boolean, signal?: AbortSignal): Promise<{ status: number; complete: boolean; text: string }> {
  try {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: `marker ${marker}` }], max_tokens: 8, temperature: 0.7, ...(stream ? { stream: true } : {}) }),
      ...(signal ? { signal } : {}),
    });
    const text = await res.text();
    const complete = res.status === 200 && (stream ? text.includes('data: [DONE]') : text.includes('"choices"'));
    return { status: res.status, complete, text };
  } catch (err) {
    return { status: 0, complete: false, text: String(err) }; // reset by a kill
  }
}
