// local-embed-tokenizer: each UTF-8 text of `text_input` (NFKC, lower-cased) to `token_ids` (INT64) and
// `attention_mask` (FP32, 1 per token, 0 per pad), L long (the outputs' dims). Tokens are hashed
// (FNV-1a, then an avalanche) into [1, vocab_size): first every word, then the character trigrams of
// each word framed by spaces, so texts sharing words or word pieces share ids; id 0 pads. Deterministic,
// with no vocabulary file; a text with more than L tokens is truncated.

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const TRIGRAM_SEED = 0x9e3779b9;

export default class LocalEmbedTokenizer {
  initialize(args) {
    this.herd = args.herd;
    const text = args.model_config.parameters?.vocab_size?.string_value ?? '8192';
    if (!/^\d+$/.test(text) || Number(text) < 2) throw new Error(`local-embed-tokenizer: parameter 'vocab_size' must be an integer of at least 2, got '${text}'`);
    this.vocabSize = Number(text);
    const ids = args.model_config.output.find((o) => o.name === 'token_ids');
    this.length = ids?.dims.at(-1) ?? -1;
    if (!(this.length > 0)) throw new Error("local-embed-tokenizer: output 'token_ids' needs a fixed length as its last dim");
  }

  execute(requests) {
    return requests.map((request) => {
      const input = request.input('text_input');
      const texts = this.herd.decodeStrings(input);
      const L = this.length;
      const ids = new BigInt64Array(texts.length * L);
      const mask = new Float32Array(texts.length * L);
      texts.forEach((text, i) => {
        const tokens = this.tokenize(text);
        for (let t = 0; t < tokens.length; t++) {
          ids[i * L + t] = BigInt(tokens[t]);
          mask[i * L + t] = 1;
        }
      });
      // [batch, 1] in, [batch, L] out; a request without the batch dimension keeps its own leading shape.
      const shape = [...input.shape.slice(0, -1), L];
      return { outputs: [this.herd.createTensor('token_ids', 'INT64', shape, ids), this.herd.createTensor('attention_mask', 'FP32', shape, mask)] };
    });
  }

  /** At most L token ids of `text`, each in [1, vocabSize). */
  tokenize(text) {
    const words = text
      .normalize('NFKC')
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w !== '');
    const tokens = [];
    const push = (hash) => {
      if (tokens.length < this.length) tokens.push(1 + (mix(hash) % (this.vocabSize - 1)));
    };
    for (const word of words) push(fnv(word, FNV_OFFSET));
    for (const word of words) {
      const framed = ` ${word} `;
      for (let start = 0; start + 3 <= framed.length && tokens.length < this.length; start++) push(fnv(framed.slice(start, start + 3), FNV_OFFSET ^ TRIGRAM_SEED));
    }
    return tokens;
  }
}

function fnv(text, seed) {
  let hash = seed;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME) >>> 0;
  return hash;
}

/** murmur3's fmix32, so nearby FNV values land on unrelated ids. */
function mix(h) {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}
