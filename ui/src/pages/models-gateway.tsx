// The gateway half of the Models page: routes from herd.yaml (aliases, strategy, fallbacks, tiers,
// patterns) and every deployment with its circuit breaker's state and health, polled every 5 s.
import { api } from '../api.ts';
import { Badge, EmptyRow, Loaded, ScrollRegion } from '../components.tsx';
import { useLoad } from '../hooks.ts';
import type { DeploymentJson, RoutesJson } from '../types.ts';

export function GatewaySection() {
  const state = useLoad(
    async (signal) => {
      const [routes, deployments] = await Promise.all([api<RoutesJson>('../admin/v1/routes', { signal }), api<{ data: DeploymentJson[] }>('../admin/v1/deployments', { signal })]);
      return { routes, deployments: deployments.data };
    },
    [],
    5000,
  );
  return (
    <section aria-labelledby="gateway-heading">
      <h2 id="gateway-heading">Gateway routes</h2>
      <Loaded state={state} what="the gateway routes">
        {(data) => (
          <>
            <RoutesTable routes={data.routes} />
            <DeploymentsTable deployments={data.deployments} />
          </>
        )}
      </Loaded>
    </section>
  );
}

function RoutesTable({ routes }: { routes: RoutesJson }) {
  const tiers = Object.entries(routes.tiers ?? {});
  return (
    <>
      <ScrollRegion label="Routes table">
        <table>
          <caption>Routes (models the gateway answers)</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Kind</th>
              <th scope="col">Aliases</th>
              <th scope="col">Strategy</th>
              <th scope="col">Fallbacks</th>
              <th scope="col">Available</th>
              <th scope="col">Deployments (provider: upstream model)</th>
            </tr>
          </thead>
          <tbody>
            {routes.models.length === 0 && <EmptyRow columns={7} text="No routes configured." />}
            {routes.models.map((m) => (
              <tr key={m.name}>
                <th scope="row">{m.name}</th>
                <td>{m.kind ?? '—'}</td>
                <td>{m.aliases.join(', ') || '—'}</td>
                <td>{m.strategy ?? '—'}</td>
                <td>{m.fallbacks?.join(', ') || '—'}</td>
                <td>{m.available === false ? <Badge tone="bad">{`no: ${(m.unavailable_reasons ?? []).join('; ') || 'unavailable'}`}</Badge> : <Badge tone="ok">yes</Badge>}</td>
                <td>
                  {m.deployments
                    .map((d) => `${d.provider}: ${d.upstream_model}${d.weight !== undefined ? ` (weight ${d.weight})` : ''}${d.enabled === false ? ' (disabled)' : ''}`)
                    .join('; ')}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      {(tiers.length > 0 || routes.patterns.length > 0) && (
        <table>
          <caption>Tiers and pattern routes</caption>
          <thead>
            <tr>
              <th scope="col">Tier or pattern</th>
              <th scope="col">Model</th>
            </tr>
          </thead>
          <tbody>
            {tiers.map(([tier, model]) => (
              <tr key={`tier-${tier}`}>
                <th scope="row">tier {tier}</th>
                <td>{model}</td>
              </tr>
            ))}
            {routes.patterns.map((p) => (
              <tr key={`pattern-${p.glob}`}>
                <th scope="row">pattern {p.glob}</th>
                <td>{p.model}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

const BREAKER_TONE = { closed: 'ok', half_open: 'warn', open: 'bad' } as const;

function DeploymentsTable({ deployments }: { deployments: DeploymentJson[] }) {
  return (
    <ScrollRegion label="Deployments table">
      <table>
        <caption>Deployments with their circuit breakers</caption>
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Provider</th>
            <th scope="col">Upstream model</th>
            <th scope="col">Kind</th>
            <th scope="col">Breaker</th>
            <th scope="col">Healthy</th>
          </tr>
        </thead>
        <tbody>
          {deployments.length === 0 && <EmptyRow columns={6} text="No deployments." />}
          {deployments.map((d) => (
            <tr key={`${d.model}|${d.provider}|${d.upstream_model}`}>
              <th scope="row">{d.model}</th>
              <td>{d.provider}</td>
              <td>{d.upstream_model}</td>
              <td>{d.kind}</td>
              <td>
                <Badge tone={BREAKER_TONE[d.breaker] ?? 'plain'}>{d.breaker.replace('_', ' ')}</Badge>
              </td>
              <td>{d.healthy ? <Badge tone="ok">healthy</Badge> : <Badge tone="bad">unhealthy</Badge>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
