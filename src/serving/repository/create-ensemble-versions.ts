// An ensemble's versions once its step models are loaded: the steps checked against their configs (a
// failure located in config.pbtxt), decoupled when a step is, and one ensemble scheduler per version.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelSpending } from '../../core/chat-port.ts';
import { HerdError, toHerdError } from '../../core/errors.ts';
import { readModelLabels } from './read-model-labels.ts';
import { EnsembleScheduler, type EnsembleStepRunner, type EnsembleStepStreamer } from '../ensemble/ensemble-scheduler.ts';
import { checkDecoupledLineage, validateEnsembleSteps } from '../ensemble/validate-ensemble-steps.ts';
import type { ModelConfig } from '../model-config/model-config.ts';
import { locateConfigField } from '../model-config/parse-model-config.ts';
import { ModelStats } from '../stats.ts';
import type { LoadedModel } from './loaded-model.ts';
import type { ModelLocation } from './scan-repositories.ts';

export interface EnsembleToBuild {
  location: ModelLocation;
  config: ModelConfig;
  versions: readonly number[];
  /** The loaded config of each step's model, in step order. */
  stepConfigs: readonly ModelConfig[];
  /** The config came from the load API's override, so there is no config.pbtxt line to point at. */
  overridden: boolean;
  /** serving.allow_files_outside_model_dir, already false for an override. */
  allowFilesOutside: boolean;
  runStep: EnsembleStepRunner;
  streamStep?: EnsembleStepStreamer;
  /** How its step models spend (LoadedModel.spending), in step order. */
  stepSpending?: readonly (ModelSpending | undefined)[];
}

export function createEnsembleVersions({
  location,
  config,
  versions,
  stepConfigs,
  overridden,
  allowFilesOutside,
  runStep,
  streamStep,
  stepSpending = [],
}: EnsembleToBuild): Map<number, LoadedModel> {
  const name = config.name;
  let decoupled: boolean;
  try {
    validateEnsembleSteps(config, (i) => stepConfigs[i] as ModelConfig);
    decoupled = checkDecoupledLineage(config, (i) => stepConfigs[i] as ModelConfig);
  } catch (err) {
    const error = toHerdError(err);
    const file = join(location.path, 'config.pbtxt');
    const where = !overridden && error.param && existsSync(file) ? locateConfigField(readFileSync(file, 'utf8'), file, error.param) : file;
    throw new HerdError(error.code, `${where}: ${error.message}`, { param: error.param, cause: error });
  }
  // Triton marks an ensemble with a decoupled step decoupled itself (its config answers so too).
  const effective: ModelConfig = decoupled ? { ...config, model_transaction_policy: { ...config.model_transaction_policy, decoupled: true } } : config;
  // An ensemble spends when a step does; a keyless caller may run it only when every spending step names its own key.
  const spenders = stepSpending.filter((s): s is ModelSpending => s !== undefined);
  const spending: ModelSpending | undefined = spenders.length > 0 ? { ownKey: spenders.every((s) => s.ownKey) } : undefined;
  const loaded = new Map<number, LoadedModel>();
  for (const version of versions) {
    const stats = new ModelStats(name, version);
    loaded.set(version, {
      name,
      version,
      config: effective,
      scheduler: new EnsembleScheduler({
        config: effective,
        stats,
        runStep,
        stepBatches: stepConfigs.map((c) => c.max_batch_size > 0),
        stepDecoupled: stepConfigs.map((c) => c.model_transaction_policy?.decoupled === true),
        ...(streamStep ? { streamStep } : {}),
      }),
      stats,
      labels: readModelLabels(config, location.path, allowFilesOutside),
      ...(spending ? { spending } : {}),
    });
  }
  return loaded;
}
