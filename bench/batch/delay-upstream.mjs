// The batch bench's OpenAI-chat upstream: every chat completion answered with the same small JSON after a fixed
// delay, so a batch's wall time has a known floor (lines × delay ÷ concurrency). Usage: node delay-upstream.mjs PORT DELAY_MS
import { createServer } from 'node:http';

const delayMs = Number(process.argv[3] ?? 5);
const completion = JSON.stringify({
  id: 'chatcmpl-batch-bench',
  object: 'chat.completion',
  created: 1764460800,
  model: 'gpt-4.1',
  choices: [{ index: 0, message: { role: 'assistant', content: 'positive' }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 },
});
let answered = 0;

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ answered }));
    return;
  }
  req.resume();
  req.on('end', () => {
    setTimeout(() => {
      answered += 1;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
      res.end(completion);
    }, delayMs);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
