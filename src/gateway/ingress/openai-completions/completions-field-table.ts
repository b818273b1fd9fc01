// The legacy completions field table (docs/fields/openai-completions.md): what the bridge onto chat does with each
// member of a /v1/completions request. An upstream with its own /completions gets every member as sent.
import { type FieldTable, NOT_MODELLED, UNKNOWN_MEMBER } from '../../protocol/dialect-field-table.ts';

const same = { bridged: 'mapped', note: 'the same field in chat' } as const;
const BRIDGE = 'the bridge answers through chat completions, which';

export const COMPLETIONS_FIELDS: FieldTable = {
  model: { bridged: 'mapped', note: "the route's model; the upstream's id replaces it" },
  prompt: { bridged: 'mapped', note: 'a string, or an array of one string: one user message' },
  'prompt: several or token ids': { bridged: 'refuse', reason: `${BRIDGE} takes one text prompt per request: send 'prompt' as a string` },
  max_tokens: same,
  temperature: same,
  top_p: same,
  n: same,
  stream: same,
  'stream_options.include_usage': { bridged: 'mapped', note: "the usage chunk, written by Herd from the answer's usage" },
  stop: same,
  presence_penalty: same,
  frequency_penalty: same,
  logit_bias: same,
  seed: same,
  user: same,
  echo: { bridged: 'mapped', note: 'false: nothing to echo' },
  'echo: true': { bridged: 'refuse', reason: `${BRIDGE} cannot echo the prompt` },
  best_of: { bridged: 'mapped', note: '1: one candidate' },
  'best_of > 1': { bridged: 'refuse', reason: `${BRIDGE} has no best_of` },
  suffix: { bridged: 'refuse', reason: `${BRIDGE} cannot insert text before a suffix` },
  logprobs: { bridged: 'refuse', reason: 'the bridge returns no logprobs' },
  [UNKNOWN_MEMBER]: { bridged: 'drop', reason: NOT_MODELLED },
};
