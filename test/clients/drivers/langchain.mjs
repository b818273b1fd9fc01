// LangChain's ChatOpenAI (@langchain/openai) as an application would use it, run as a child process by the
// client suite: HERD_BASE_URL (…/v1) and HERD_API_KEY in, one JSON line per case out.
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

const getWeather = tool(async ({ city }) => `sunny in ${city}, 21C`, {
  name: 'get_weather',
  description: 'The weather in a city',
  schema: z.object({ city: z.string() }),
});

const text = (message) => (typeof message.content === 'string' ? message.content : message.content.map((part) => part.text ?? '').join(''));

async function runCase(kind, api, model) {
  const chat = new ChatOpenAI({
    model,
    apiKey: process.env.HERD_API_KEY,
    configuration: { baseURL: process.env.HERD_BASE_URL },
    maxRetries: 0,
    useResponsesApi: api === 'responses',
  });
  if (kind === 'invoke') return text(await chat.invoke('Say hello.'));
  if (kind === 'stream') {
    let out = '';
    for await (const chunk of await chat.stream('Say hello.')) out += text(chunk);
    return out;
  }
  // The tool round trip by hand, as LangChain's docs show it: the model's call, the tool's answer, the final text.
  const withTools = chat.bindTools([getWeather]);
  const messages = [new HumanMessage('What is the weather in Paris?')];
  const first = await withTools.invoke(messages);
  messages.push(first);
  for (const call of first.tool_calls ?? []) {
    messages.push(new ToolMessage({ content: await getWeather.invoke(call.args), tool_call_id: call.id }));
  }
  if ((first.tool_calls ?? []).length === 0) throw new Error(`no tool call in ${JSON.stringify(first.content)}`);
  return text(await withTools.invoke(messages));
}

// Cases: `<invoke|stream|tools>:<chat|responses>:<model>`, run one after another.
for (const spec of process.argv.slice(2)) {
  const [kind, api, model] = spec.split(':');
  try {
    console.log(JSON.stringify({ case: spec, ok: true, text: await runCase(kind, api, model) }));
  } catch (error) {
    console.log(JSON.stringify({ case: spec, ok: false, error: String(error?.message ?? error) }));
  }
}
