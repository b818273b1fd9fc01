// One version of a backend model made servable: its instances loaded (passive ones aside), registered
// with the rate limiter, a scheduler over them, and the warmup run; whatever fails unloads what loaded.
import { join } from 'node:path';
import { HerdError } from '../../core/errors.ts';
import type { BackendFactory } from '../backends/backend.ts';
import type { ModelConfig } from '../model-config/model-config.ts';
import { createModelScheduler } from '../scheduler/create-model-scheduler.ts';
import type { SchedulerInstance } from '../scheduler/model-scheduler.ts';
import type { RateLimiter } from '../scheduler/rate-limiter.ts';
import { ModelStats } from '../stats.ts';
import { runModelWarmup } from '../warmup/run-model-warmup.ts';
import type { LoadedModel } from './loaded-model.ts';
import type { ModelLocation } from './scan-repositories.ts';

export interface ModelVersionToLoad {
  location: ModelLocation;
  config: ModelConfig;
  factory: BackendFactory;
  version: number;
  labels: ReadonlyMap<string, readonly string[]>;
  /** Set with --rate-limit execution_count: instances with resources register here. */
  rateLimiter: RateLimiter | undefined;
}

export async function loadModelVersion({ location, config, factory, version, labels, rateLimiter }: ModelVersionToLoad): Promise<LoadedModel> {
  const instances: SchedulerInstance[] = [];
  const passive: SchedulerInstance[] = [];
  try {
    for (const group of config.instance_group) {
      if (group.kind === 'KIND_GPU') {
        throw new HerdError('INVALID_ARG', `instance group ${group.name} of model ${config.name} specifies KIND_GPU but this machine has no GPU; use KIND_CPU`);
      }
      const resources = (group.rate_limiter?.resources ?? []).map((r) => ({ name: r.name, count: r.count }));
      for (let i = 0; i < group.count; i++) {
        const name = `${group.name}_${i}`;
        // As Triton: a passive instance is loaded and initialized, but not registered, warmed or scheduled.
        if (rateLimiter && resources.length > 0 && !group.passive) rateLimiter.register(resources, name);
        const backend = await factory.load({
          config,
          modelPath: location.path,
          versionPath: join(location.path, String(version)),
          version,
          instanceName: name,
          instanceKind: group.kind === 'KIND_MODEL' ? 'KIND_MODEL' : 'KIND_CPU',
        });
        (group.passive ? passive : instances).push({ name, backend, resources, priority: group.rate_limiter?.priority || 1 });
      }
    }
  } catch (err) {
    await Promise.allSettled([...instances, ...passive].map((i) => i.backend.unload()));
    throw err;
  }
  if (instances.length === 0) {
    await Promise.allSettled(passive.map((i) => i.backend.unload()));
    throw new HerdError('INVALID_ARG', `model '${config.name}' has only passive instances: no instance would receive requests`);
  }
  const stats = new ModelStats(config.name, version);
  const scheduler = createModelScheduler({ config, instances, passiveInstances: passive, stats, rateLimiter });
  try {
    await runModelWarmup({ config, version, versionPath: join(location.path, String(version)), scheduler });
  } catch (err) {
    await scheduler.close();
    throw err;
  }
  const spending = factory.describeSpending?.(config);
  return spending ? { name: config.name, version, config, scheduler, stats, labels, spending } : { name: config.name, version, config, scheduler, stats, labels };
}
