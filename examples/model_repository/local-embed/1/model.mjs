// local-embed: one L2-normalised FP32 vector per UTF-8 text of `text_input`, by the hashing trick:
// every character n-gram (lengths ngram_min..ngram_max, on the NFKC lower-cased text framed by spaces)
// and every word is hashed (FNV-1a) to a bucket and a sign, and adds ±1 there. Texts sharing
// n-grams get close vectors (cosine similarity), the same text always the same vector, with no
// weights to ship. A batch of any size is one execute() call, so the dynamic batcher pays off.

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const WORD_SEED = 0x9e3779b9;

export default class LocalEmbed {
  initialize(args) {
    this.herd = args.herd;
    const params = args.model_config.parameters ?? {};
    const int = (key, fallback) => {
      const text = params[key]?.string_value;
      if (text === undefined) return fallback;
      if (!/^\d+$/.test(text) || Number(text) < 1) throw new Error(`local-embed: parameter '${key}' must be a positive integer, got '${text}'`);
      return Number(text);
    };
    this.dimensions = int('dimensions', 256);
    this.ngramMin = int('ngram_min', 3);
    this.ngramMax = int('ngram_max', 5);
    if (this.ngramMax < this.ngramMin) throw new Error('local-embed: ngram_max must be at least ngram_min');
    const output = args.model_config.output.find((o) => o.name === 'embedding');
    const declared = output?.dims.at(-1);
    if (declared !== undefined && declared !== -1 && declared !== this.dimensions) {
      throw new Error(`local-embed: output 'embedding' has dims [${declared}] but parameter 'dimensions' is ${this.dimensions}`);
    }
  }

  execute(requests) {
    return requests.map((request) => {
      const input = request.input('text_input');
      const texts = this.herd.decodeStrings(input);
      const out = new Float32Array(texts.length * this.dimensions);
      for (let i = 0; i < texts.length; i++) this.embed(texts[i], out.subarray(i * this.dimensions, (i + 1) * this.dimensions));
      // [batch, 1] in, [batch, dimensions] out; a request without the batch dimension keeps its own leading shape.
      const shape = [...input.shape.slice(0, -1), this.dimensions];
      return { outputs: [this.herd.createTensor('embedding', 'FP32', shape, out)] };
    });
  }

  /** Writes the embedding of `text` into `vector` (zeroed, `dimensions` long). */
  embed(text, vector) {
    const framed = ` ${text.normalize('NFKC').toLowerCase()} `;
    const dims = this.dimensions;
    const add = (hash) => {
      // The low bits choose the bucket, the top bit the sign: collisions cancel out instead of piling up.
      vector[(hash >>> 1) % dims] += hash & 0x80000000 ? -1 : 1;
    };
    for (let start = 0; start + this.ngramMin <= framed.length; start++) {
      let hash = FNV_OFFSET;
      const end = Math.min(framed.length, start + this.ngramMax);
      for (let i = start; i < end; i++) {
        hash = Math.imul(hash ^ framed.charCodeAt(i), FNV_PRIME) >>> 0;
        // Each length gets its own hash space: mix the length in before using the prefix.
        if (i - start + 1 >= this.ngramMin) add(mix(hash ^ (i - start + 1)));
      }
    }
    for (const word of framed.split(/[^\p{L}\p{N}]+/u)) {
      if (word === '') continue;
      let hash = FNV_OFFSET ^ WORD_SEED;
      for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), FNV_PRIME) >>> 0;
      add(mix(hash));
    }
    let norm = 0;
    for (let i = 0; i < dims; i++) norm += vector[i] * vector[i];
    if (norm === 0) return;
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < dims; i++) vector[i] *= scale;
  }
}

/** A final avalanche (murmur3's fmix32), so nearby FNV values land in unrelated buckets. */
function mix(h) {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}
