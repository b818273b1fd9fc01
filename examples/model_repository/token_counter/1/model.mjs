// token_counter: the number of o200k_base tokens (the GPT-4.1 / GPT-4o / o-series encoding) in each
// UTF-8 text of `text_input`, as INT32 `token_count` of the same shape. Runs on Herd's `js` backend.
// It imports nothing: the tokenizer and tensor helpers come from Herd through `args.herd`, so this
// repository works wherever it is copied. Text that spells a special token such as "<|endoftext|>"
// counts as ordinary characters (tiktoken's encode_ordinary).

export default class TokenCounter {
  async initialize(args) {
    this.herd = args.herd;
    this.tokenizer = await args.herd.loadTokenizer('o200k_base');
  }

  execute(requests) {
    return requests.map((request) => {
      const text = request.input('text_input');
      const counts = new Int32Array(text.data.length);
      this.herd.decodeStrings(text).forEach((value, i) => {
        counts[i] = this.tokenizer.countTokens(value);
      });
      return { outputs: [this.herd.createTensor('token_count', 'INT32', text.shape, counts)] };
    });
  }
}
