import { problem } from '@switchyard/ui/client';
import { client } from './client.js';

describe("the chat app's words for failures", () => {
  it('names the provider to report when the upstream request failed', () => {
    const explanation = client.explain({
      code: 'upstream_failed',
      message: 'connect ECONNREFUSED',
      address: 'https://relay.example.com',
    });
    expect(explanation.title).toBe('The request to the upstream API failed.');
    expect(explanation.address).toBe('https://relay.example.com');
    expect(explanation.hint).toMatch(/report it to the provider/);
    expect(explanation.detail).toBe('connect ECONNREFUSED');
  });

  it.each([
    ['upstream_timeout', /try again later/i],
    ['no_available_channel', /retry later/i],
    ['address_not_whitelisted', /community edition.*license/i],
    ['model_not_permitted', /open this model or grant you the permission/i],
    ['bad_gateway', /check that the API container is running/i],
  ])('tells what to do about %s', (code, hint) => {
    expect(client.explain({ code, message: '' }).hint).toMatch(hint);
  });

  it('falls back to the server message for codes it does not know', () => {
    expect(client.explain({ code: 'brand_new', message: 'Something new happened' })).toEqual({
      title: 'Something new happened',
    });
  });

  it('keeps the invalid fields', () => {
    const fields = [{ field: 'password', message: 'password must be longer' }];
    expect(
      client.explain({ code: 'validation_failed', message: 'Invalid password', fields }).fields,
    ).toEqual(fields);
  });

  it('reads thrown problems and plain errors', () => {
    const thrown = problem({ status: 403, code: 'model_not_permitted', message: 'No' });
    expect(client.explain(thrown).title).toBe('You are not permitted to use this model.');
    expect(client.explain(new Error('boom'))).toEqual({ title: 'boom' });
  });
});
