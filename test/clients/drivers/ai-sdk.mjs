// The AI SDK (`ai` 6 with @ai-sdk/openai and @ai-sdk/anthropic) as an application would use it, run as a child
// process by the client suite: HERD_BASE_URL (…/v1) and HERD_API_KEY in, one JSON line per case out.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';

const baseURL = process.env.HERD_BASE_URL;
const apiKey = process.env.HERD_API_KEY;
const openai = createOpenAI({ baseURL, apiKey });
const anthropic = createAnthropic({ baseURL, apiKey });

const tools = {
  get_weather: tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `sunny in ${city}, 21C`,
  }),
};

/** Which model object each case name means: the Responses API (the provider's default), chat, or Messages. */
const models = {
  responses: (id) => openai(id),
  chat: (id) => openai.chat(id),
  messages: (id) => anthropic(id),
};

async function runCase(kind, api, id) {
  const model = models[api](id);
  const prompt = 'What is the weather in Paris?';
  if (kind === 'generate') return (await generateText({ model, prompt: 'Say hello.', maxRetries: 0 })).text;
  if (kind === 'stream') {
    const result = streamText({ model, prompt: 'Say hello.', maxRetries: 0 });
    let text = '';
    for await (const part of result.textStream) text += part;
    return text;
  }
  const result = await generateText({ model, prompt, tools, stopWhen: stepCountIs(3), maxRetries: 0 });
  return result.text;
}

// Cases: `<generate|stream|tools>:<responses|chat|messages>:<model>`, run one after another.
for (const spec of process.argv.slice(2)) {
  const [kind, api, id] = spec.split(':');
  try {
    console.log(JSON.stringify({ case: spec, ok: true, text: await runCase(kind, api, id) }));
  } catch (error) {
    console.log(JSON.stringify({ case: spec, ok: false, error: String(error?.message ?? error), body: error?.responseBody }));
  }
}
