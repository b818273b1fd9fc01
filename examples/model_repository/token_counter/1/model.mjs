// token_counter: the number of o200k_base tokens (the GPT-4.1 / GPT-4o / o-series encoding) in each
// UTF-8 text of `text_input`, as INT32 `token_count` of the same shape. Runs on Herd's `js` backend.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

// Text that spells a special token such as "<|endoftext|>" is user text, not a control token:
// count it as ordinary characters (tiktoken's encode_ordinary) instead of letting the tokenizer throw.
const ORDINARY_TEXT = { disallowedSpecial: new Set() };

export default class TokenCounter {
  initialize(args) {
    this.herd = args.herd;
  }

  execute(requests) {
    return requests.map((request) => {
      const text = request.input('text_input');
      const counts = new Int32Array(text.data.length);
      this.herd.decodeStrings(text).forEach((value, i) => {
        counts[i] = countTokens(value, ORDINARY_TEXT);
      });
      return { outputs: [this.herd.createTensor('token_count', 'INT32', text.shape, counts)] };
    });
  }
}
