import { SectionLayout } from '@switchyard/ui';
import { ApiKeysPage } from './ApiKeysPage.js';
import { CodesPage } from './CodesPage.js';
import { EditionPage } from './EditionPage.js';
import { ModelsPage } from './ModelsPage.js';
import { OverviewPage } from './OverviewPage.js';
import { PlansPage } from './PlansPage.js';
import { SettingsPage } from './SettingsPage.js';
import { UsersPage } from './UsersPage.js';

const SECTIONS = [
  { path: '/admin/overview', label: 'Overview' },
  { path: '/admin/api-keys', label: 'API keys' },
  { path: '/admin/models', label: 'Models' },
  { path: '/admin/users', label: 'Users' },
  { path: '/admin/plans', label: 'Plans' },
  { path: '/admin/codes', label: 'Codes' },
  { path: '/admin/settings', label: 'Settings' },
  { path: '/admin/edition', label: 'Edition' },
];

export function AdminPage(props: { path: string }) {
  const current = SECTIONS.find((section) => props.path.startsWith(section.path)) ?? SECTIONS[0];
  return (
    <SectionLayout label="Admin dashboard" sections={SECTIONS} current={current}>
      {current?.path === '/admin/overview' && <OverviewPage />}
      {current?.path === '/admin/api-keys' && <ApiKeysPage />}
      {current?.path === '/admin/models' && <ModelsPage />}
      {current?.path === '/admin/users' && <UsersPage />}
      {current?.path === '/admin/plans' && <PlansPage />}
      {current?.path === '/admin/codes' && <CodesPage />}
      {current?.path === '/admin/settings' && <SettingsPage />}
      {current?.path === '/admin/edition' && <EditionPage />}
    </SectionLayout>
  );
}
