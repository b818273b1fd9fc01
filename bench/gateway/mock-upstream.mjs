// A local OpenAI-compatible upstream for the gateway benchmark: answers every chat completion with the
// same small JSON body, or (stream: true) the same SSE sequence. Usage: node mock-upstream.mjs PORT [CONTENT_EVENTS]
// (default 5 content events; 20 makes the 23-event stream of issue 17's sequential measurement).
import { createServer } from 'node:http';

const completion = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1764460800,
  model: 'gpt-4.1',
  choices: [{ index: 0, message: { role: 'assistant', content: "Bonjour! Comment puis-je vous aider aujourd'hui ?" }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 24, completion_tokens: 12, total_tokens: 36 },
});
// As OpenAI streams under stream_options.include_usage (which Herd always asks for): every chunk carries
// `usage: null`, and a last chunk with empty choices carries the usage.
const chunk = (delta, finish, withUsage) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1764460800, model: 'gpt-4.1', choices: [{ index: 0, delta, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) })}\n\n`;
const words = ['Bonjour', '! Comment', ' puis-je', ' vous aider', " aujourd'hui ?"];
const contentEvents = Number(process.argv[3] ?? words.length);
const parts = Array.from({ length: contentEvents }, (_, i) => words[i % words.length]);
const sse = (withUsage) =>
  [
    chunk({ role: 'assistant', content: '' }, null, withUsage),
    ...parts.map((t) => chunk({ content: t }, null, withUsage)),
    chunk({}, 'stop', withUsage),
    ...(withUsage
      ? [
          `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1764460800, model: 'gpt-4.1', choices: [], usage: { prompt_tokens: 24, completion_tokens: 12, total_tokens: 36 } })}\n\n`,
        ]
      : []),
    'data: [DONE]\n\n',
  ].join('');
const streams = { plain: sse(false), withUsage: sse(true) };

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(body.stream_options?.include_usage ? streams.withUsage : streams.plain);
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
      res.end(completion);
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
