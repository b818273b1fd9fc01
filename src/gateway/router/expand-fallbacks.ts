// The ordered list of models a request may be served by: the resolved model, then its fallbacks,
// then theirs — breadth first, so a model's own list keeps its order — each model once (no cycles).
import type { CatalogModel, GatewayCatalog } from './gateway-catalog.ts';
import type { ModelFilter } from './resolve-route.ts';

/** Fallbacks the caller's key may not use are left out (a fallback must never widen access); theirs still count. */
export function expandFallbacks(catalog: GatewayCatalog, primary: CatalogModel, allowed?: ModelFilter): CatalogModel[] {
  const visit: CatalogModel[] = [primary];
  const seen = new Set<string>([primary.name]);
  for (let i = 0; i < visit.length; i++) {
    for (const name of visit[i]!.fallbacks) {
      const model = catalog.models.get(name);
      if (model === undefined || seen.has(name)) continue;
      seen.add(name);
      visit.push(model);
    }
  }
  return visit.filter((model, i) => i === 0 || allowed === undefined || allowed(model.name));
}
