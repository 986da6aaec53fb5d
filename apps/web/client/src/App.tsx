import * as chat from './api/chat-api.js';
import { client } from './api/client.js';
import { type Me } from './api/types.js';
import { ErrorNotice } from './components/ErrorNotice.js';
import { HeaderBalance } from './components/HeaderBalance.js';
import { AccountPage } from './pages/AccountPage.js';
import { AuthPage } from './pages/AuthPage.js';
import { ChatPage } from './pages/chat/ChatPage.js';
import { CreditsPage } from './pages/CreditsPage.js';
import { UsagePage } from './pages/UsagePage.js';
import { AdminPage } from './pages/admin/AdminPage.js';
import {
  navigate,
  ToastProvider,
  TopBar,
  usePath,
  useSession,
  type SessionClient,
} from '@switchyard/ui';

const sessionClient: SessionClient<Me> = client.sessionClient({ me: chat.me, logout: chat.logout });

export function App() {
  return (
    <ToastProvider>
      <ChatApp />
    </ToastProvider>
  );
}

function ChatApp() {
  const path = usePath();
  const { state, error, check: loadMe, signOut: endSession } = useSession(sessionClient);

  const signOut = async () => {
    await endSession();
    navigate('/login');
  };

  if (state.kind === 'checking') {
    return (
      <main class="centered" aria-busy="true">
        {error ? (
          <div class="card">
            <ErrorNotice error={error} />
            <button type="button" onClick={() => void loadMe()}>
              Try again
            </button>
          </div>
        ) : (
          <p>Loading…</p>
        )}
      </main>
    );
  }

  if (state.kind === 'signed-out') {
    return (
      <AuthPage
        mode={path === '/register' ? 'register' : 'login'}
        onSignedIn={async () => {
          await loadMe();
          if (path === '/login' || path === '/register') navigate('/', { replace: true });
        }}
      />
    );
  }

  const { me } = state;
  const isAdmin = me.role === 'admin';
  const section = path.startsWith('/admin')
    ? 'admin'
    : path === '/usage'
      ? 'usage'
      : path === '/account'
        ? 'account'
        : path === '/credits'
          ? 'credits'
          : 'chat';
  const sections = [
    { path: '/', label: 'Chat' },
    { path: '/usage', label: 'Usage' },
    { path: '/credits', label: 'Credits' },
    { path: '/account', label: 'Account' },
    ...(isAdmin ? [{ path: '/admin/overview', label: 'Admin' }] : []),
  ];
  const currentSection = sections.find((candidate) => candidate.label.toLowerCase() === section);

  return (
    <div class={section === 'chat' ? 'shell shell-fixed' : 'shell'}>
      <TopBar brand="Switchyard chat" sections={sections} current={currentSection}>
        <HeaderBalance />
        <span aria-label="Signed in as">{me.username}</span>
        <button type="button" class="secondary" onClick={() => void signOut()}>
          Sign out
        </button>
      </TopBar>
      {section === 'chat' && <ChatPage path={path} />}
      {section === 'usage' && <UsagePage />}
      {section === 'account' && <AccountPage />}
      {section === 'credits' && <CreditsPage />}
      {section === 'admin' &&
        (isAdmin ? (
          <AdminPage path={path} />
        ) : (
          <main id="main" class="page">
            <ErrorNotice
              error={{
                code: 'forbidden',
                message: 'Only administrators can open the admin dashboard.',
              }}
            />
          </main>
        ))}
    </div>
  );
}
