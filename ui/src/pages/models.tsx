// Models: the served repository (state, reason, backend, instances, batching, config), load/unload in
// explicit mode, per-model stats with a small chart of inferences per second; then the gateway's routes.
import { useRef } from 'preact/hooks';
import { api } from '../api.ts';
import { orDash } from '../format.ts';
import { Badge, ErrorNote, Heading, JsonBlock, Loaded, ScrollRegion } from '../components.tsx';
import { useAction, useLoad } from '../hooks.ts';
import { useIsAdmin, useSession } from '../session.ts';
import type { ServingModelJson, ServingStatJson } from '../types.ts';
import { GatewaySection } from './models-gateway.tsx';
import { type History, ServingStats, recordHistory } from './models-stats.tsx';

interface ServingData {
  mode: string;
  models: ServingModelJson[];
  stats: ServingStatJson[];
}

export function ModelsPage() {
  const session = useSession();
  return (
    <>
      <Heading>Models</Heading>
      {session.server.serving ? <ServingSection /> : <p class="muted">This server serves no models of its own (serving is off).</p>}
      {session.server.gateway ? <GatewaySection /> : <p class="muted">The gateway is off on this server: no routes.</p>}
    </>
  );
}

function ServingSection() {
  const history = useRef<History>(new Map());
  const state = useLoad(
    async (signal): Promise<ServingData> => {
      const [models, stats] = await Promise.all([
        api<{ model_control_mode: string; data: ServingModelJson[] }>('../admin/v1/serving/models', { signal }),
        api<{ data: ServingStatJson[] }>('../admin/v1/serving/stats', { signal }),
      ]);
      recordHistory(history.current, stats.data, Date.now());
      return { mode: models.model_control_mode, models: models.data, stats: stats.data };
    },
    [],
    5000,
  );
  return (
    <section aria-labelledby="serving-heading">
      <h2 id="serving-heading">Served models</h2>
      <Loaded state={state} what="the served models">
        {(data) => (
          <>
            <RepositoryTable data={data} onChanged={state.reload} />
            <ServingStats stats={data.stats} history={history.current} />
          </>
        )}
      </Loaded>
    </section>
  );
}

function stateTone(state: string | null): 'ok' | 'warn' | 'bad' | 'plain' {
  if (state === null) return 'plain';
  if (state === 'READY') return 'ok';
  return state === 'UNAVAILABLE' ? 'bad' : 'warn';
}

function RepositoryTable({ data, onChanged }: { data: ServingData; onChanged: () => void }) {
  const admin = useIsAdmin();
  const action = useAction();
  const explicit = data.mode === 'explicit';
  const control = async (name: string, verb: 'load' | 'unload') => {
    await action.run(async () => {
      await api(`../admin/v1/serving/models/${encodeURIComponent(name)}/${verb}`, { method: 'POST', body: {} });
      onChanged();
    });
  };
  return (
    <>
      <p class="muted">
        Model control mode: <strong>{data.mode}</strong>
        {explicit ? '' : ' (loading and unloading from here needs --model-control-mode=explicit)'}
      </p>
      <ErrorNote error={action.error} />
      <ScrollRegion label="Model repository table">
        <table>
          <caption>Model repository</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Version</th>
              <th scope="col">State</th>
              <th scope="col">Reason</th>
              <th scope="col">Backend</th>
              <th scope="col">Instances</th>
              <th scope="col">Max batch size</th>
              <th scope="col">Dynamic batching</th>
              <th scope="col">Config</th>
              {admin && explicit && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {data.models.map((m) => (
              <tr key={`${m.name}/${m.version ?? ''}`}>
                <th scope="row">{m.name}</th>
                <td>{m.version || '—'}</td>
                <td>
                  <Badge tone={stateTone(m.state)}>{m.state ?? 'not loaded'}</Badge>
                </td>
                <td>{m.reason || '—'}</td>
                <td>{m.backend || '—'}</td>
                <td class="num">{orDash(m.instances)}</td>
                <td class="num">{orDash(m.max_batch_size)}</td>
                <td>{m.dynamic_batching ? 'yes' : 'no'}</td>
                <td>{m.config === undefined || m.config === null ? '—' : <JsonBlock value={m.config} summary={`Config of ${m.name}`} />}</td>
                {admin && explicit && (
                  <td class="actions">
                    <button type="button" aria-label={`Load ${m.name}`} disabled={action.busy} onClick={() => control(m.name, 'load')}>
                      Load
                    </button>
                    <button type="button" aria-label={`Unload ${m.name}`} disabled={action.busy} onClick={() => control(m.name, 'unload')}>
                      Unload
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </>
  );
}
