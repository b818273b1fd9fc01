// The handle of one loaded, servable model version: what a transport resolves once per request and
// hands to the inference service, so the repository is not asked again for the same request.
import type { ModelSpending } from '../../core/chat-port.ts';
import type { ModelConfig } from '../model-config/model-config.ts';
import type { Scheduler } from '../scheduler/model-scheduler.ts';
import type { ModelStats } from '../stats.ts';

/** One loaded, servable model version. */
export interface LoadedModel {
  name: string;
  version: number;
  config: ModelConfig;
  scheduler: Scheduler;
  stats: ModelStats;
  /** Output name -> labels from its label_filename. */
  labels: ReadonlyMap<string, readonly string[]>;
  /**
   * Set when a request to it reaches a paid upstream (an llm model, an ensemble with one), resolved at
   * load: transports authenticate such requests; for every other model this is the one check they pay.
   */
  spending?: ModelSpending;
}

/** True when the model answers several responses per request (`model_transaction_policy { decoupled: true }`). */
export function isDecoupledModel(model: LoadedModel): boolean {
  return model.config.model_transaction_policy?.decoupled === true;
}
