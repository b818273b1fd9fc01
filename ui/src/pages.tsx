// The page table: each hash route's nav name and component, in the order the nav lists them.
import type { FunctionComponent } from 'preact';
import { AuditPage } from './pages/audit.tsx';
import { KeysPage } from './pages/keys.tsx';
import { ModelsPage } from './pages/models.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { PlaygroundPage } from './pages/playground.tsx';
import { RequestDetailPage } from './pages/request-detail.tsx';
import { RequestsPage } from './pages/requests.tsx';
import { SettingsPage } from './pages/settings.tsx';
import { SpendPage } from './pages/spend.tsx';
import { TeamsPage } from './pages/teams.tsx';

export interface PageEntry {
  path: string;
  name: string;
  component: FunctionComponent<{ id: string | undefined }>;
}

export const PAGES: PageEntry[] = [
  { path: 'overview', name: 'Overview', component: OverviewPage },
  { path: 'models', name: 'Models', component: ModelsPage },
  { path: 'keys', name: 'Keys', component: KeysPage },
  { path: 'teams', name: 'Teams', component: TeamsPage },
  { path: 'spend', name: 'Spend', component: SpendPage },
  { path: 'requests', name: 'Requests', component: ({ id }) => (id ? <RequestDetailPage id={id} /> : <RequestsPage />) },
  { path: 'audit', name: 'Audit', component: AuditPage },
  { path: 'playground', name: 'Playground', component: PlaygroundPage },
  { path: 'settings', name: 'Settings', component: SettingsPage },
];
