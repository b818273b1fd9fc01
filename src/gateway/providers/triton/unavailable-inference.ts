// The InferencePort of a gateway built without the serving side (a bare ChatService in a test or a
// benchmark): every in-process triton model is unavailable, so the router falls back as for any outage.
import type { InferencePort } from '../../../core/inference-port.ts';

export const UNAVAILABLE_INFERENCE: InferencePort = {
  infer: () => Promise.reject(new Error('unreachable: describe() answers undefined')),
  stream: async function* () {},
  describe: () => undefined,
};
