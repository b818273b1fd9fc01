// The tokenizer a `js` model gets from `args.herd.loadTokenizer()`: Herd's own gpt-tokenizer, so a
// model file needs no package of its own and its repository works wherever it is copied. Loaded on
// first use (the vocabulary is large), shared by every model and by the gateway's usage estimates.
import { HerdError } from '../../../core/errors.ts';

/** The encodings a model may ask for (OpenAI's names). */
export const TOKENIZER_ENCODINGS = ['o200k_base', 'cl100k_base'] as const;
export type TokenizerEncoding = (typeof TOKENIZER_ENCODINGS)[number];

export interface ModelTokenizer {
  readonly encoding: TokenizerEncoding;
  /** Token ids of `text`; text that spells a special token ("<|endoftext|>") is ordinary text, as tiktoken's encode_ordinary. */
  encode(text: string): number[];
  decode(tokens: readonly number[]): string;
  /** The number of tokens `encode(text)` returns, without building the array. */
  countTokens(text: string): number;
}

interface GptTokenizerModule {
  encode(text: string, options?: { disallowedSpecial?: Set<string> }): number[];
  decode(tokens: Iterable<number>): string;
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number;
}

// Literal specifiers, so bundlers and the import checker see each one.
const IMPORTS: Record<TokenizerEncoding, () => Promise<GptTokenizerModule>> = {
  o200k_base: () => import('gpt-tokenizer/encoding/o200k_base'),
  cl100k_base: () => import('gpt-tokenizer/encoding/cl100k_base'),
};

const ORDINARY_TEXT = { disallowedSpecial: new Set<string>() };
const loaded = new Map<TokenizerEncoding, Promise<ModelTokenizer>>();

export function loadTokenizer(encoding: TokenizerEncoding = 'o200k_base'): Promise<ModelTokenizer> {
  if (!(TOKENIZER_ENCODINGS as readonly string[]).includes(encoding)) {
    return Promise.reject(new HerdError('INVALID_ARG', `loadTokenizer: unknown encoding '${String(encoding)}'; use one of ${TOKENIZER_ENCODINGS.join(', ')}`));
  }
  let tokenizer = loaded.get(encoding);
  if (!tokenizer) {
    tokenizer = IMPORTS[encoding]().then((module) =>
      Object.freeze({
        encoding,
        encode: (text: string) => module.encode(text, ORDINARY_TEXT),
        decode: (tokens: readonly number[]) => module.decode(tokens),
        countTokens: (text: string) => module.countTokens(text, ORDINARY_TEXT),
      }),
    );
    loaded.set(encoding, tokenizer);
  }
  return tokenizer;
}
