import {
  asProblem,
  Loading,
  ProblemNotice,
  ThemeSelect,
  ToastProvider,
  TopBar,
  navigate,
  usePath,
  useSession,
  type Section,
  type SessionClient,
} from '@switchyard/ui';
import { api, call, client, explain, session, type Schemas } from './api/client.js';
import { MeContext } from './me.js';
import { AccountPage } from './pages/AccountPage.js';
import { AdministratorsPage } from './pages/AdministratorsPage.js';
import { AuditPage } from './pages/AuditPage.js';
import { BudgetsPage } from './pages/BudgetsPage.js';
import { ChannelsPage } from './pages/ChannelsPage.js';
import { MyTeamsPage } from './pages/MyTeamsPage.js';
import { FallbacksPage } from './pages/FallbacksPage.js';
import { OverviewPage } from './pages/OverviewPage.js';
import { PasswordPage } from './pages/PasswordPage.js';
import { PricesPage } from './pages/PricesPage.js';
import { RedemptionPage } from './pages/RedemptionPage.js';
import { RequestLogPage } from './pages/RequestLogPage.js';
import { SignInPage } from './pages/SignInPage.js';
import { TeamsPage } from './pages/TeamsPage.js';
import { TokensPage } from './pages/TokensPage.js';
import { UsagePage } from './pages/UsagePage.js';

/** Signed in with the initial (or a reset) password: nothing else works until it changes. */
type MustChangePassword = { kind: 'must-change-password' };

const sessionClient: SessionClient<Schemas['AdminProfile']> = client.sessionClient({
  me: () => call(api.GET('/api/auth/me')),
  logout: () => call(api.POST('/api/auth/logout')),
});

const passwordChangeRequired = (failure: unknown): MustChangePassword | undefined =>
  asProblem(failure).code === 'password_change_required'
    ? { kind: 'must-change-password' }
    : undefined;

type Role = Schemas['AdminProfile']['role'];
const ADMINISTRATORS: Role[] = ['owner', 'admin', 'viewer'];

/** The pages, each shown to the roles the API lets read it (docs/teams.md, "Members"). */
const SECTIONS: (Section & { roles: Role[] })[] = [
  { path: '/', label: 'Overview', roles: ADMINISTRATORS },
  { path: '/', label: 'My teams', roles: ['member'] },
  { path: '/channels', label: 'Channels', roles: ADMINISTRATORS },
  { path: '/tokens', label: 'Tokens', roles: ADMINISTRATORS },
  { path: '/teams', label: 'Teams', roles: ADMINISTRATORS },
  { path: '/budgets', label: 'Budgets', roles: ADMINISTRATORS },
  { path: '/redemption-codes', label: 'Redemption codes', roles: ADMINISTRATORS },
  { path: '/usage', label: 'Usage', roles: ADMINISTRATORS },
  { path: '/prices', label: 'Prices', roles: ADMINISTRATORS },
  { path: '/fallbacks', label: 'Fallbacks', roles: ADMINISTRATORS },
  // Owners and administrators only: the request log holds users' prompts.
  { path: '/request-log', label: 'Request log', roles: ['owner', 'admin'] },
  { path: '/administrators', label: 'Administrators', roles: ['owner'] },
  { path: '/audit', label: 'Audit log', roles: ADMINISTRATORS },
  { path: '/account', label: 'Account', roles: [...ADMINISTRATORS, 'member'] },
];

export function App() {
  return (
    <ToastProvider>
      <Dashboard />
    </ToastProvider>
  );
}

function Dashboard() {
  const path = usePath();
  const {
    state,
    setState,
    error,
    check: loadMe,
    signOut: endSession,
  } = useSession(sessionClient, passwordChangeRequired);

  const signOut = async () => {
    await endSession();
    navigate('/');
  };

  if (state.kind === 'checking') {
    return (
      <main id="main" class="centered">
        {error ? (
          <div class="card">
            <ProblemNotice error={error} explain={explain} />
            <button type="button" onClick={() => void loadMe()}>
              Try again
            </button>
          </div>
        ) : (
          <Loading />
        )}
      </main>
    );
  }

  if (state.kind === 'signed-out') {
    return (
      <SignInPage
        onSignedIn={(answer) => {
          session.save(answer.token);
          if (answer.mustChangePassword) setState({ kind: 'must-change-password' });
          else setState({ kind: 'signed-in', me: answer.admin });
        }}
      />
    );
  }

  if (state.kind === 'must-change-password') {
    return (
      <main id="main" class="centered">
        <PasswordPage forced onChanged={loadMe} />
      </main>
    );
  }

  const { me } = state;

  const sections = SECTIONS.filter((section) => section.roles.includes(me.role));
  const current =
    sections.find((section) => section.path !== '/' && path.startsWith(section.path)) ??
    sections.find((section) => section.path === path);

  return (
    <MeContext.Provider value={me}>
      <div class="shell">
        <TopBar brand="Switchyard gateway" sections={sections} current={current}>
          <span>
            <span aria-label="Signed in as">{me.username}</span>{' '}
            <span class="badge">{me.role}</span>
          </span>
          <ThemeSelect />
          <button type="button" class="secondary" onClick={() => void signOut()}>
            Sign out
          </button>
        </TopBar>
        <main id="main" class="page">
          <Page
            path={current?.path}
            member={me.role === 'member'}
            onSignOut={() => void signOut()}
          />
        </main>
      </div>
    </MeContext.Provider>
  );
}

function Page(props: { path: string | undefined; member: boolean; onSignOut: () => void }) {
  switch (props.path) {
    case '/':
      return props.member ? <MyTeamsPage /> : <OverviewPage />;
    case '/teams':
      return <TeamsPage />;
    case '/budgets':
      return <BudgetsPage />;
    case '/redemption-codes':
      return <RedemptionPage />;
    case '/channels':
      return <ChannelsPage />;
    case '/tokens':
      return <TokensPage />;
    case '/usage':
      return <UsagePage />;
    case '/prices':
      return <PricesPage />;
    case '/fallbacks':
      return <FallbacksPage />;
    case '/administrators':
      return <AdministratorsPage />;
    case '/audit':
      return <AuditPage />;
    case '/request-log':
      return <RequestLogPage />;
    case '/account':
      return <AccountPage onSignOut={props.onSignOut} />;
    default:
      return (
        <section>
          <h1>Page not found</h1>
          <p>
            There is no page here. <a href="/">Go to the overview</a>.
          </p>
        </section>
      );
  }
}
