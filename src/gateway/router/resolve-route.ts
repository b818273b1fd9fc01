// From the `model` a client sent to a catalog model: exact name, alias, tier (fast, balanced,
// quality, advanced), `auto` (first rule whose prompt-size bound fits), then the first routes.patterns
// glob that matches. Unknown names are an error listing what exists — never a quiet switch to some other model.
import { AUTO_MODEL, TIER_NAMES, type AutoRule, type ModelKind, type TierName } from '../../config/gateway-config-schema.ts';
import { HerdError, notFound } from '../../core/errors.ts';
import { type CatalogDeployment, type CatalogModel, type GatewayCatalog, resolveUpstreamModel } from './gateway-catalog.ts';
import type { PromptTokenEstimate } from './prompt-token-estimate.ts';

export type RouteKind = 'model' | 'alias' | 'tier' | 'auto' | 'pattern';

export interface ResolvedRoute {
  /** The name as the client sent it. */
  requested: string;
  kind: RouteKind;
  model: CatalogModel;
  /** The tier a `tier` or `auto` route went through. */
  tier?: TierName;
  /** The herd.yaml rule that matched, for x-herd-route and the ledger: `model:x`, `alias:x`, `tier:x`, `auto`, `pattern:glob`. */
  rule: string;
}

/**
 * The id an attempt on `deployment` sends upstream: a pattern route hands the client's own id to its
 * model's `{model}` deployments; fallbacks and every other route use the model's name.
 */
export function resolveRouteUpstreamModel(route: Pick<ResolvedRoute, 'kind' | 'requested' | 'model'>, deployment: CatalogDeployment): string {
  return resolveUpstreamModel(deployment, route.kind === 'pattern' && deployment.model === route.model.name ? route.requested : undefined);
}

/** Whether the caller's key may use a model (by canonical name); absent means every model. */
export type ModelFilter = (model: string) => boolean;

/**
 * `kind` is what the endpoint serves (chat completions by default): a model of the other kind is a
 * clear 400 naming the endpoint that serves it, never a confusing upstream error.
 */
export async function resolveRoute(
  catalog: GatewayCatalog,
  requested: string,
  prompt: PromptTokenEstimate,
  allowed?: ModelFilter,
  kind: ModelKind = 'chat',
): Promise<ResolvedRoute> {
  const direct = catalog.findModel(requested);
  if (direct !== undefined) {
    if (allowed !== undefined && !allowed(direct.name)) {
      throw new HerdError('PERMISSION_DENIED', `The model \`${requested}\` is not allowed for this key.`, { param: 'model', reason: 'model_not_allowed' });
    }
    checkKind(direct, requested, kind);
    const exact = direct.name === requested;
    return { requested, kind: exact ? 'model' : 'alias', model: direct, rule: `${exact ? 'model' : 'alias'}:${requested}` };
  }

  let tier: TierName | undefined;
  let routeKind: RouteKind = 'tier';
  if (isTierName(requested)) tier = requested;
  else if (requested === AUTO_MODEL && catalog.autoRules.length > 0) {
    routeKind = 'auto';
    tier = await selectAutoTier(catalog.autoRules, prompt);
  }
  const target = tier === undefined ? undefined : catalog.tiers.get(tier);
  let model = target === undefined ? undefined : catalog.models.get(target);
  // Tiers and auto are names the operator set, so they win over globs; an unset tier name may still match one.
  let rule = routeKind === 'auto' ? AUTO_MODEL : `tier:${requested}`;
  if (model === undefined) {
    const pattern = catalog.findPattern(requested);
    if (pattern !== undefined) {
      model = catalog.models.get(pattern.model);
      routeKind = 'pattern';
      tier = undefined;
      rule = `pattern:${pattern.glob}`;
    }
  }
  if (model === undefined) {
    const names = listModelNames(catalog, allowed);
    const globs = catalog.patterns.filter((p) => names.includes(p.model)).map((p) => p.glob);
    const orPattern = globs.length === 0 ? '' : `, or an id matching ${globs.join(', ')}`;
    throw notFound(`The model \`${requested}\` does not exist or you do not have access to it. Available models: ${names.join(', ') || 'none'}${orPattern}.`, {
      param: 'model',
    });
  }
  if (allowed !== undefined && !allowed(model.name)) {
    throw new HerdError('PERMISSION_DENIED', `\`${requested}\` routes to \`${model.name}\`, which this key may not use.`, { param: 'model', reason: 'model_not_allowed' });
  }
  checkKind(model, requested, kind);
  const route: ResolvedRoute = { requested, kind: routeKind, model, rule };
  if (tier !== undefined) route.tier = tier;
  return route;
}

const ENDPOINT_OF: Readonly<Record<ModelKind, string>> = { chat: 'POST /v1/chat/completions', embedding: 'POST /v1/embeddings' };

function checkKind(model: CatalogModel, requested: string, wanted: ModelKind): void {
  if (model.kind === wanted) return;
  const what = model.kind === 'embedding' ? 'an embedding model' : 'a chat model';
  const route = model.name === requested ? '' : ` (\`${requested}\` routes to \`${model.name}\`)`;
  throw new HerdError('INVALID_ARG', `The model \`${requested}\`${route} is ${what}: use ${ENDPOINT_OF[model.kind]} for it.`, { param: 'model' });
}

/** The first rule that matches; the byte bound settles the first rule without tokenizing when it can. */
export async function selectAutoTier(rules: readonly AutoRule[], prompt: PromptTokenEstimate): Promise<TierName> {
  const first = rules[0];
  if (first === undefined) throw new Error('selectAutoTier needs at least one rule');
  if (first.max_prompt_tokens === undefined || prompt.upperBound() <= first.max_prompt_tokens) return first.tier;
  const tokens = await prompt.exact();
  for (const rule of rules) {
    if (rule.max_prompt_tokens === undefined || tokens <= rule.max_prompt_tokens) return rule.tier;
  }
  // Config validation makes the last rule a catch-all; an unvalidated list falls back to its last rule.
  return rules[rules.length - 1]!.tier;
}

/** Names a client may send: models this key may use that can serve now, then the routes to them. */
export function listModelNames(catalog: GatewayCatalog, allowed?: ModelFilter): string[] {
  const usable = (name: string) => {
    const model = catalog.models.get(name);
    return model !== undefined && model.enabledDeployments.length > 0 && (allowed === undefined || allowed(name));
  };
  const names = [...catalog.models.keys()].filter(usable);
  for (const tier of TIER_NAMES) {
    const target = catalog.tiers.get(tier);
    if (target !== undefined && usable(target)) names.push(tier);
  }
  if (catalog.autoRules.length > 0 && catalog.autoRules.every((rule) => usable(catalog.tiers.get(rule.tier) ?? ''))) names.push(AUTO_MODEL);
  return names;
}

function isTierName(name: string): name is TierName {
  return (TIER_NAMES as readonly string[]).includes(name);
}
