// The one chat request every gateway bench sends (issue #17's body: a system and a user message, 64
// tokens, temperature 0.7) and the master key the bench configs give Herd.
export const BENCH_MASTER_KEY = 'sk-herd-bench-master-key-0000000000000000000000';

export const createBenchChatBody = (stream: boolean): Buffer =>
  Buffer.from(
    JSON.stringify({
      model: 'gpt-4.1',
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'Say hello in French.' },
      ],
      max_tokens: 64,
      temperature: 0.7,
      ...(stream ? { stream: true } : {}),
    }),
  );
