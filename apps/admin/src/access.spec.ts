import { Controller, Get } from '@nestjs/common';
import { AdminHarness, type Session } from './testing/admin-harness.fixture.js';

// Every route of the app, and who may call it. A route added without an entry here fails
// the first test; an entry with the wrong roles fails the second.

type Role = 'owner' | 'admin' | 'viewer' | 'member';
type Access = 'ops' | 'public' | Role[];

const R: Role[] = ['owner', 'admin', 'viewer'];
/** Anyone signed in, members included: their own session. */
const S: Role[] = [...R, 'member'];
/** A member's own view; administrators have theirs. */
const M: Role[] = ['member'];
const ROLES: Role[] = [...S];
const E: Role[] = ['owner', 'admin'];
const O: Role[] = ['owner'];

const ROUTES: Record<string, Access> = {
  'GET /healthz': 'ops',
  'GET /readyz': 'ops',
  'POST /api/auth/login': 'public',
  'POST /api/auth/logout': S,
  'POST /api/auth/password': S,
  'POST /api/auth/logout-everywhere': S,
  'GET /api/auth/me': S,
  'GET /api/admins': O,
  'POST /api/admins': O,
  'GET /api/admins/:id': O,
  'PATCH /api/admins/:id': O,
  'DELETE /api/admins/:id': O,
  'GET /api/audit': E,
  'GET /api/channels': R,
  'POST /api/channels': E,
  'POST /api/channels/import': E,
  'GET /api/channels/:id': R,
  'PATCH /api/channels/:id': E,
  'DELETE /api/channels/:id': E,
  'POST /api/channels/:id/enable': E,
  'POST /api/channels/:id/disable': E,
  'PATCH /api/channels/:id/keys/:keyId': E,
  'POST /api/channels/:id/test': E,
  'POST /api/channels/upstream-models': E,
  'POST /api/channels/:id/upstream-models': E,
  'GET /api/tokens': R,
  'POST /api/tokens': E,
  'POST /api/tokens/bundle': E,
  'GET /api/tokens/:id': R,
  'PATCH /api/tokens/:id': E,
  'DELETE /api/tokens/:id': E,
  'GET /api/prices': R,
  'GET /api/prices/unpriced': R,
  'PUT /api/prices': E,
  'DELETE /api/prices/:model': E,
  'GET /api/model-fallbacks': R,
  'PUT /api/model-fallbacks/:model': E,
  'DELETE /api/model-fallbacks/:model': E,
  'GET /api/usage/logs': R,
  'GET /api/usage/summary': R,
  // Bodies are users' prompts and answers: not for viewers (docs/operations.md).
  'GET /api/request-log': E,
  'GET /api/request-log/settings': E,
  'GET /api/request-log/:requestId': E,
  'PUT /api/request-log/tokens/:id': E,
  'PUT /api/request-log/teams/:id': E,
  'GET /api/overview/series': R,
  'GET /api/overview/health': R,
  'GET /api/teams': R,
  'POST /api/teams': E,
  'GET /api/teams/:id': R,
  'PATCH /api/teams/:id': E,
  'DELETE /api/teams/:id': E,
  'POST /api/teams/:id/members': E,
  'DELETE /api/teams/:id/members/:userId': E,
  'POST /api/teams/:id/balance/credits': E,
  'POST /api/teams/:id/balance/adjustments': E,
  'GET /api/teams/:id/balance/ledger': R,
  'GET /api/budgets': R,
  'PUT /api/budgets': E,
  'DELETE /api/budgets/:id': E,
  'GET /api/price-groups': R,
  'PUT /api/price-groups/:name': E,
  'DELETE /api/price-groups/:name': E,
  'POST /api/redemption-batches': E,
  'GET /api/redemption-batches': R,
  'GET /api/redemption-batches/:id/codes': R,
  'GET /api/my/teams': M,
  'GET /api/my/teams/:teamId': M,
  'GET /api/my/teams/:teamId/tokens': M,
  'POST /api/my/teams/:teamId/tokens': M,
  'DELETE /api/my/teams/:teamId/tokens/:id': M,
  'GET /api/my/teams/:teamId/usage': M,
  'GET /api/my/teams/:teamId/ledger': M,
  'POST /api/my/teams/:teamId/redeem': M,
};

/** Reachable while the password must still be changed. */
const BEFORE_PASSWORD_CHANGE = new Set([
  'POST /api/auth/logout',
  'POST /api/auth/logout-everywhere',
  'POST /api/auth/password',
]);

const isDocumentation = (route: string) => / \/api\/docs($|[-/])/.test(route);

function concrete(path: string): string {
  return path
    .replace(':keyId', '2147483000')
    .replace(':userId', '2147483002')
    .replace(':teamId', '2147483003')
    .replace(':name', 'no-such-group')
    .replace(':id', '2147483001')
    .replace(':model', 'no-such-model');
}

@Controller('api/forgotten')
class ForgottenController {
  // Declares neither @Public() nor @Roles(): the guard must refuse it to everyone.
  @Get()
  secret(): { leaked: true } {
    return { leaked: true };
  }
}

describe('access control', () => {
  let h: AdminHarness;
  const sessions = {} as Record<Role, Session>;
  let mustChange: string;

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'access', extraControllers: [ForgottenController] });
    for (const role of ROLES) sessions[role] = await h.session(role);
    const pending = await h.createAdmin('owner', { mustChangePassword: true });
    mustChange = await h.login(pending.username);
  });

  afterAll(async () => {
    await h.close();
  });

  const registered = () =>
    [
      ...new Set(h.routes.filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${r.url}`)),
    ].filter((route) => !isDocumentation(route) && route !== 'GET /api/forgotten');

  const call = (route: string, token?: string) => {
    const [method, path] = route.split(' ') as [string, string];
    const api = h.api(token);
    const url = concrete(path);
    switch (method) {
      case 'GET':
        return api.get(url);
      case 'POST':
        return api.post(url, {});
      case 'PUT':
        return api.put(url, {});
      case 'PATCH':
        return api.patch(url, {});
      case 'DELETE':
        return api.delete(url);
      default:
        throw new Error(`no way to call ${route}`);
    }
  };

  it('knows every route the app serves', () => {
    expect(registered().sort()).toEqual(Object.keys(ROUTES).sort());
  });

  it('enforces the roles of every route', async () => {
    for (const [route, access] of Object.entries(ROUTES)) {
      if (access === 'ops') {
        const response = await call(route);
        expect([route, response.status]).toEqual([route, 200]);
        continue;
      }
      if (access === 'public') {
        const response = await call(route);
        expect([route, response.status]).not.toEqual([route, 401]);
        expect([route, response.status]).not.toEqual([route, 403]);
        continue;
      }
      const anonymous = await call(route);
      expect([route, 'anonymous', anonymous.status]).toEqual([route, 'anonymous', 401]);
      for (const role of ROLES) {
        // Logging out ends the session it is called with, and everywhere ends every session
        // of its administrator: use a spare session, or a spare administrator.
        const token =
          route === 'POST /api/auth/logout'
            ? await h.login(sessions[role].username)
            : route === 'POST /api/auth/logout-everywhere'
              ? (await h.session(role)).token
              : sessions[role].token;
        const response = await call(route, token);
        if (access.includes(role)) {
          expect([route, role, response.status]).not.toEqual([route, role, 401]);
          expect([route, role, response.status]).not.toEqual([route, role, 403]);
        } else {
          expect([route, role, response.status, response.body.error?.code]).toEqual([
            route,
            role,
            403,
            'forbidden',
          ]);
        }
      }
    }
  });

  it('allows only the password change and logout before the first password change', async () => {
    for (const route of Object.keys(ROUTES)) {
      const access = ROUTES[route];
      if (access === 'ops' || access === 'public' || route === 'POST /api/auth/logout') continue;
      const token =
        route === 'POST /api/auth/logout-everywhere'
          ? await h.login((await h.createAdmin('owner', { mustChangePassword: true })).username)
          : mustChange;
      const response = await call(route, token);
      if (BEFORE_PASSWORD_CHANGE.has(route)) {
        expect([route, response.status]).not.toEqual([route, 403]);
      } else {
        expect([route, response.status, response.body.error?.code]).toEqual([
          route,
          403,
          'password_change_required',
        ]);
      }
    }
    await h.api(mustChange).post('/api/auth/logout').expect(204);
  });

  it('refuses a route that declares no roles, even to an owner', async () => {
    expect(h.routes.some((r) => r.url === '/api/forgotten')).toBe(true);
    for (const token of [undefined, sessions.owner.token]) {
      const response = await h.api(token).get('/api/forgotten').expect(403);
      expect(response.body.error.code).toBe('forbidden');
      expect(response.text).not.toContain('leaked');
    }
  });

  it('answers unknown paths with 404 not_found', async () => {
    const response = await h.api(sessions.owner.token).get('/api/nothing-here').expect(404);
    expect(response.body.error.code).toBe('not_found');
  });
});
