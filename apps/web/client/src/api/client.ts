import { createApiClient, type Vocabulary } from '@switchyard/ui/client';
import createClient from 'openapi-fetch';
import { type paths } from '../generated/chat-api.js';

// The chat API, typed from its OpenAPI document (src/generated, built by
// scripts/generate-api-types.mjs, so a path, parameter or field the API does not have is a
// type error), through the client kit both apps share (`createApiClient` in libs/ui).

// What each failure means to the person looking at it, and what to do
// (docs/specification.md, "Errors"). Codes are the chat API's stable ones; the server's own
// message is kept as detail.
const vocabulary: Vocabulary = {
  codes: {
    upstream_failed: {
      title: 'The request to the upstream API failed.',
      hint: 'Please report it to the provider of this address (name their web site), or ask your administrator to check the API key.',
    },
    upstream_timeout: {
      title: 'The upstream API did not answer in time.',
      hint: 'The relay may be slow or overloaded, or a firewall may block it. Try again later; administrators can check the firewall and tell the provider.',
    },
    no_available_channel: {
      title: 'No channel is available upstream right now (the upstream is saturated).',
      hint: 'Please retry later. Administrators can add API keys for round-robin and disable a failing one.',
    },
    address_not_whitelisted: {
      title: 'This API address is not on the whitelist of the Plus edition.',
      hint: 'Use one of the recommended relays, switch to the community edition, or activate a license (Admin → Edition).',
    },
    model_not_permitted: {
      title: 'You are not permitted to use this model.',
      hint: 'Pick another model, or ask an administrator to open this model or grant you the permission.',
    },
    no_api_key: {
      title: 'No API key is set up for this kind of model.',
      hint: 'An administrator must add an enabled API key with the matching purpose (drawing models need a drawing key).',
    },
    bad_gateway: {
      title: 'The chat service cannot be reached (HTTP 502).',
      hint: 'Check that the API container is running, then try again.',
    },
    network_error: {
      title: 'The web server cannot be reached.',
      hint: 'Check your connection. If the page at port 8080 does not load, check that the web container is running and that the firewall allows port 8080.',
    },
    stream_interrupted: {
      title: 'The reply stopped before it was complete.',
      hint: 'Send the message again.',
    },
    insufficient_credits: {
      title: 'You do not have enough credits for this message.',
      hint: 'Redeem a code on the Credits page, pick a cheaper or free model, or ask an administrator.',
    },
    code_not_redeemable: {
      title: 'This code does not work.',
      hint: 'Check it for typos; a code works once and may have expired.',
    },
    balance_below_zero: {
      title: 'That would take the balance below zero.',
      hint: 'Tick “Allow a negative balance” to do it anyway.',
    },
    invalid_credentials: { title: 'Wrong username or password.' },
    unauthenticated: { title: 'Your session has ended.', hint: 'Please sign in again.' },
    user_disabled: {
      title: 'This account is disabled.',
      hint: 'Ask an administrator to enable it again.',
    },
    forbidden: { title: 'This needs an administrator.' },
    not_found: { title: 'It no longer exists.', hint: 'Reload the page.' },
    conflict: { title: 'That name is already taken.' },
    validation_failed: { title: 'Some fields need another look.' },
    too_many_attempts: { title: 'Too many attempts.', hint: 'Wait a minute, then try again.' },
    license_invalid: {
      title: 'The license was not accepted.',
      hint: 'Check that it was issued for this installation and has not expired, and paste it whole.',
    },
    service_unavailable: { title: 'The service is not ready.', hint: 'Try again in a moment.' },
    internal_error: {
      title: 'Something went wrong on the server.',
      hint: 'Try again; if it keeps happening, tell your administrator.',
    },
  },
};

export const client = createApiClient({
  tokenKey: 'switchyard.chat.token',
  create: (baseUrl) => createClient<paths>({ baseUrl }),
  vocabulary,
});
