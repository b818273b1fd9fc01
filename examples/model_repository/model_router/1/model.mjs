// model_router: the tier (a gateway model name, resolved by herd.yaml's routes.tiers) for each
// token_count, by the config's `rules` parameter; a `preference` naming one of the rules' tiers wins.
export default class ModelRouter {
  initialize(args) {
    this.herd = args.herd;
    const text = args.model_config.parameters.rules?.string_value ?? '';
    this.rules = text
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => {
        const [limit, tier] = part.split(':').map((s) => s.trim());
        if (!tier || (limit !== '*' && !/^\d+$/.test(limit))) throw new Error(`model_router: rule '${part}' is not '<max tokens>:<tier>' or '*:<tier>'`);
        return { max: limit === '*' ? Infinity : Number(limit), tier };
      });
    if (this.rules.length === 0 || this.rules.at(-1).max !== Infinity) throw new Error("model_router: parameter 'rules' must end with a '*:<tier>' rule");
    this.tiers = new Set(this.rules.map((r) => r.tier));
  }

  execute(requests) {
    return requests.map((request) => {
      const counts = request.input('token_count').data;
      const preference = request.input('preference');
      const preferred = preference ? this.herd.decodeStrings(preference) : [];
      const names = [];
      for (let i = 0; i < counts.length; i++) {
        const wanted = (preferred[i] ?? preferred[0] ?? '').trim();
        if (wanted !== '' && !this.tiers.has(wanted)) {
          return { error: this.herd.createError('INVALID_ARG', `model_router: preference '${wanted}' is not one of ${[...this.tiers].join(', ')}`) };
        }
        names.push(wanted || this.rules.find((r) => counts[i] <= r.max).tier);
      }
      return { outputs: [this.herd.createTensor('model_name', 'BYTES', request.input('token_count').shape, names)] };
    });
  }
}
