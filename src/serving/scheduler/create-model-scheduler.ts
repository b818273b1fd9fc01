// Turns a model's config into its scheduler: the default scheduler, or the dynamic batcher with its
// preferred sizes, delay, priority levels and queue policies; instances with their rate-limiter needs.
import type { Clock } from '../../core/clock.ts';
import type { InferenceRequest } from '../backends/backend.ts';
import type { ModelConfig, ModelQueuePolicy } from '../model-config/model-config.ts';
import type { ModelStats } from '../stats.ts';
import { ModelScheduler, type DynamicBatchingOptions, type SchedulerInstance } from './model-scheduler.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { NO_POLICY } from './request-queue.ts';

export interface SchedulerContext {
  config: ModelConfig;
  instances: readonly SchedulerInstance[];
  /** Passive instances: loaded, never scheduled (Triton's instance_group passive). */
  passiveInstances?: readonly SchedulerInstance[];
  stats: ModelStats;
  /** Present when the server runs with --rate-limit execution_count. */
  rateLimiter?: RateLimiter;
  clock?: Clock;
}

export function createModelScheduler(context: SchedulerContext): ModelScheduler {
  const { config } = context;
  const batchingModel = config.max_batch_size > 0;
  const ragged = new Set(config.input.filter((i) => i.allow_ragged_batch).map((i) => i.name));
  return new ModelScheduler({
    modelName: config.name,
    instances: context.instances,
    passiveInstances: context.passiveInstances ?? [],
    stats: context.stats,
    batchSizeOf: batchingModel ? (r) => r.inputs[0]?.shape[0] ?? 1 : () => 1,
    shapeKeyOf: (r) => shapeKey(r, ragged),
    batching: createBatchingOptions(config),
    rateLimiter: context.rateLimiter,
    clock: context.clock,
  });
}

function createBatchingOptions(config: ModelConfig): DynamicBatchingOptions | undefined {
  const db = config.dynamic_batching;
  if (!db) return undefined;
  const levels = db.priority_levels;
  const base: ModelQueuePolicy = db.default_queue_policy ?? NO_POLICY;
  const queuePolicies = levels === 0 ? [base] : Array.from({ length: levels }, (_, i) => db.priority_queue_policy[String(i + 1)] ?? base);
  return {
    policy: {
      // As Triton's batcher: a model that cannot batch still queues, with batches of one.
      maxBatchSize: Math.max(1, config.max_batch_size),
      preferredBatchSizes: [...db.preferred_batch_size].sort((a, b) => a - b),
      maxQueueDelayMs: db.max_queue_delay_microseconds / 1000,
    },
    preserveOrdering: db.preserve_ordering,
    priorityLevels: levels,
    defaultPriorityLevel: levels === 0 ? 1 : db.default_priority_level,
    queuePolicies,
  };
}

/** Inputs' names, datatypes and dims after the batch dim; ragged inputs batch whatever their shape. */
function shapeKey(request: InferenceRequest, ragged: ReadonlySet<string>): string {
  let key = '';
  for (const t of request.inputs) {
    key += ragged.has(t.name) ? `${t.name}:${t.datatype};` : `${t.name}:${t.datatype}:${t.shape.slice(1).join(',')};`;
  }
  return key;
}
