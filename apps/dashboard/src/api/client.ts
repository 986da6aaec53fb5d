import { createApiClient, type Vocabulary } from '@switchyard/ui';
import createClient from 'openapi-fetch';
import { type components, type paths } from '../generated/admin-api.js';

// The admin API, typed from its OpenAPI document (src/generated, built by
// scripts/generate-api-types.mjs): a path, parameter or field the API does not have is a
// type error here, not a failure in the browser. Sessions, failures and their words go
// through the client kit both apps share (`createApiClient` in libs/ui).

export type Schemas = components['schemas'];

/** What a failure means to the person looking, by the admin API's stable codes. */
const vocabulary: Vocabulary = {
  codes: {
    invalid_credentials: { title: 'Wrong username or password.' },
    too_many_attempts: { title: 'Too many attempts. Wait a few minutes, then try again.' },
    validation_failed: { title: 'Some fields need another look.' },
    version_conflict: {
      title: 'Someone else changed this since you opened it. Reload and try again.',
    },
    password_change_required: { title: 'Change your password first.' },
    bad_gateway: { title: 'The admin service is not reachable; check that it is running.' },
  },
  statuses: { 403: { title: 'Your role does not allow this. Ask an owner or administrator.' } },
};

export const client = createApiClient({
  tokenKey: 'switchyard.dashboard.session',
  create: (baseUrl) => createClient<paths>({ baseUrl }),
  vocabulary,
  answered: (response) => `The gateway answered ${response.status}.`,
  unreachable: 'The gateway cannot be reached. Check your connection and that it is running.',
});

export const { api, session, call, explain } = client;
