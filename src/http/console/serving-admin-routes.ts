// The console's serving pages on the admin API: the repository's models with their configs, their
// statistics (as /v2/models/stats), and load/unload (explicit mode, admin only), over the KServe routes' own deps.
import { HerdError } from '../../core/errors.ts';
import type { ApiGroupGuard } from '../../core/api-groups.ts';
import { requireAccess } from '../../gateway/admin/admin-roles.ts';
import type { Actor } from '../../gateway/keys/key-store.ts';
import type { ServingSummary } from '../../gateway/admin/console-reads.ts';
import type { InferenceService } from '../../serving/inference-service.ts';
import { convertModelConfigToJson } from '../../serving/model-config/convert-model-config-to-json.ts';
import type { LoadedModel, ModelRepositoryManager } from '../../serving/repository/model-repository-manager.ts';
import type { ModelStatistics } from '../../serving/stats.ts';
import { modelParams, servingActionJson, servingModelsJson, servingStatsJson } from '../admin-console-schemas.ts';
import { type AdminRouteSpec, answer, defineAdminRoute } from '../admin-route-spec.ts';
import { z } from 'zod';

/** What the serving pages read: the KServe routes' repository and inference service, and server readiness. */
export interface ServingAdminSource {
  repository: ModelRepositoryManager;
  inference: InferenceService;
  isReady: () => boolean;
  /** Triton's API groups on HTTP: load/unload answer to the model-repository group's rule, as /v2/repository does. */
  apiGuard?: ApiGroupGuard | undefined;
}

/** Triton's words when the load API is off (model_repository_manager.cc), answered 400 here. */
const NOT_EXPLICIT = 'explicit model load / unload is not allowed if polling is enabled';
/** How far back the overview's inference rate looks. */
const RATE_WINDOW_MS = 60_000;

/** The overview's serving half: model states and inferences per second, from samples of the models' counts. */
export class ServingSummarySampler {
  private readonly samples: { at: number; count: number }[] = [];

  constructor(
    private readonly source: ServingAdminSource,
    private readonly now: () => number = Date.now,
  ) {}

  summary(): ServingSummary {
    const at = this.now();
    let count = 0;
    for (const model of this.source.repository.loadedModels()) count += model.stats.snapshot().inference_count;
    while (this.samples.length > 1 && at - (this.samples[1] as { at: number }).at >= RATE_WINDOW_MS) this.samples.shift();
    const oldest = this.samples[0];
    this.samples.push({ at, count });
    const seconds = oldest === undefined ? 0 : (at - oldest.at) / 1000;
    // An unload resets a model's counts: never a negative rate.
    const rate = oldest === undefined || seconds <= 0 ? 0 : Math.max(0, count - oldest.count) / seconds;
    const models = { ready: 0, failed: 0, total: 0 };
    for (const entry of this.source.repository.summary()) {
      models.total += 1;
      if (entry.state === 'READY') models.ready += 1;
      else if (entry.state === 'UNAVAILABLE' && entry.reason !== 'unloaded') models.failed += 1;
    }
    return { ready: this.source.isReady(), models, inferencesPerSec: Math.round(rate * 1000) / 1000 };
  }
}

export function createServingAdminRoutes(source: () => ServingAdminSource | undefined): AdminRouteSpec[] {
  const need = (): ServingAdminSource => {
    const found = source();
    if (!found) throw new HerdError('NOT_FOUND', 'Model serving is not available on this server.');
    return found;
  };
  return [
    defineAdminRoute({
      method: 'GET',
      path: '/admin/v1/serving/models',
      operationId: 'listServingModels',
      summary: "The model repository's models: state, backend, instances, batching and config",
      response: servingModelsJson,
      handle: async ({ ctx }) => {
        requireAccess(ctx.actor, 'read', 'listing served models');
        return answer(200, describeServingModels(need()));
      },
    }),
    defineAdminRoute({
      method: 'GET',
      path: '/admin/v1/serving/stats',
      operationId: 'getServingStats',
      summary: 'Statistics of every loaded model version (the figures of /v2/models/stats)',
      response: servingStatsJson,
      handle: async ({ ctx }) => {
        requireAccess(ctx.actor, 'read', 'reading serving statistics');
        return answer(200, { data: need().inference.statistics().map(convertStatistics) });
      },
    }),
    loadRoute('load', need),
    loadRoute('unload', need),
  ];
}

function loadRoute(action: 'load' | 'unload', need: () => ServingAdminSource): AdminRouteSpec {
  return defineAdminRoute({
    method: 'POST',
    path: `/admin/v1/serving/models/:name/${action}`,
    operationId: `${action}ServingModel`,
    summary:
      action === 'load'
        ? 'Load (or reload) a model from the repository: explicit model control mode only'
        : 'Unload a model after its requests finish: explicit model control mode only',
    params: modelParams,
    body: z.strictObject({}).optional(),
    response: servingActionJson,
    handle: async ({ ctx, params }) => {
      requireAccess(ctx.actor, 'write', `${action}ing model '${params.name}'`);
      const { repository, apiGuard } = need();
      requireRepositoryGroup(apiGuard, ctx.actor, `${action}ing model '${params.name}'`);
      if (repository.controlMode !== 'explicit') throw new HerdError('INVALID_ARG', NOT_EXPLICIT);
      await (action === 'load' ? repository.load(params.name) : repository.unload(params.name));
      const state = repository.summary().find((m) => m.name === params.name)?.state ?? null;
      return answer(200, { name: params.name, action, state });
    },
  });
}

/**
 * The model-repository group's rule (by default the master key when one is set), the one every route that
 * loads or unloads a model answers to: a master-key rule passes the master key (or its console session) only;
 * a Triton header rule cannot be met from here and points to /v2/repository.
 */
function requireRepositoryGroup(guard: ApiGroupGuard | undefined, actor: Actor, what: string): void {
  if (guard === undefined || !guard.isRestricted('model-repository')) return;
  const refusal = guard.check('model-repository', () => undefined);
  if (refusal === undefined || (refusal instanceof HerdError && actor.id === 'master')) return;
  const why =
    refusal instanceof HerdError
      ? 'the model-repository API needs the master key (server.restricted_api); sign in with it'
      : `the model-repository API is restricted to the header '${refusal.header}': use /v2/repository with it`;
  throw new HerdError('PERMISSION_DENIED', `The key '${actor.name}' may not do this: ${what}. ${why.charAt(0).toUpperCase()}${why.slice(1)}.`, { reason: 'admin_only' });
}

function describeServingModels(source: ServingAdminSource) {
  const loaded = new Map<string, LoadedModel>();
  for (const model of source.repository.loadedModels()) loaded.set(`${model.name}/${model.version}`, model);
  const data = source.repository.index(false).map((entry) => {
    const model = entry.version === undefined ? undefined : loaded.get(`${entry.name}/${entry.version}`);
    const config = model?.config;
    return {
      name: entry.name,
      version: entry.version ?? null,
      state: entry.state ?? null,
      reason: entry.reason || null,
      backend: config ? config.backend || config.platform || null : null,
      instances: config ? config.instance_group.reduce((sum, g) => sum + (g.count || 1), 0) || 1 : null,
      max_batch_size: config ? config.max_batch_size : null,
      dynamic_batching: config?.dynamic_batching !== undefined,
      config: config ? (convertModelConfigToJson(config) as Record<string, unknown>) : null,
    };
  });
  return { model_control_mode: source.repository.controlMode, data };
}

function convertStatistics(s: ModelStatistics) {
  const i = s.inference_stats;
  return {
    name: s.name,
    version: s.version,
    inference_count: s.inference_count,
    execution_count: s.execution_count,
    success: i.success,
    fail: i.fail,
    queue: i.queue,
    compute_input: i.compute_input,
    compute_infer: i.compute_infer,
    compute_output: i.compute_output,
    batch_stats: s.batch_stats.map((b) => ({ batch_size: b.batch_size, count: b.compute_infer.count })),
  };
}
