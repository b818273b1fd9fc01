// Settings (read-only): the effective configuration, secrets masked by the server, and where each value
// came from (herd.yaml line, environment variable, flag or default).
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { EmptyRow, Heading, Loaded, ScrollRegion } from '../components.tsx';
import { useLoad } from '../hooks.ts';
import type { SettingsJson } from '../types.ts';

export function SettingsPage() {
  const state = useLoad((signal) => api<SettingsJson>('../admin/v1/settings', { signal }), []);
  const [filter, setFilter] = useState('');
  return (
    <>
      <Heading>Settings</Heading>
      <Loaded state={state} what="the settings">
        {(data) => {
          const needle = filter.trim().toLowerCase();
          const entries = data.entries.filter((e) => !needle || e.path.toLowerCase().includes(needle) || e.source.toLowerCase().includes(needle));
          return (
            <>
              <p>
                Configuration file: <code>{data.config_file ?? 'none (defaults, environment and flags)'}</code>. Read-only: change herd.yaml and restart.
              </p>
              <div class="filters">
                <div class="field">
                  <label for="settings-filter">Filter settings</label>
                  <input id="settings-filter" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
                </div>
              </div>
              <ScrollRegion label="Settings table">
                <table>
                  <caption>
                    Effective configuration ({entries.length} of {data.entries.length} settings)
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Setting</th>
                      <th scope="col">Value</th>
                      <th scope="col">Source</th>
                    </tr>
                  </thead>
                  <tbody>
                    {entries.length === 0 && <EmptyRow columns={3} text="No setting matches." />}
                    {entries.map((e) => (
                      <tr key={e.path}>
                        <th scope="row">
                          <code>{e.path}</code>
                        </th>
                        <td>
                          <code>{typeof e.value === 'string' ? e.value : JSON.stringify(e.value)}</code>
                        </td>
                        <td>{e.source}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollRegion>
            </>
          );
        }}
      </Loaded>
    </>
  );
}
