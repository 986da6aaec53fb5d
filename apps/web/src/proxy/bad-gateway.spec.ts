import 'reflect-metadata';
import { badGatewayError, badGatewayPage, prefersHtml } from './bad-gateway.js';

describe('prefersHtml', () => {
  it.each([
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', true],
    ['text/html', true],
    ['application/json, text/html;q=0.5', false],
    ['text/html;q=0.9, application/json;q=0.9', true],
    ['text/html;q=0', false],
    ['application/json', false],
    ['*/*', false],
    ['text/event-stream', false],
    ['', false],
  ])('%j → %s', (accept, expected) => {
    expect(prefersHtml(accept)).toBe(expected);
  });

  it('means JSON when there is no Accept header', () => {
    expect(prefersHtml(undefined)).toBe(false);
  });
});

describe('the 502 answers', () => {
  it('name the remedy in the JSON error', () => {
    const body = badGatewayError().toBody();
    expect(body.error.code).toBe('bad_gateway');
    expect(body.error.message).toMatch(/check that the API container is running/i);
    expect(badGatewayError().status).toBe(502);
  });

  it('escape what they echo in the page', () => {
    expect(badGatewayPage('<script>x</script>')).toContain('&lt;script&gt;x&lt;/script&gt;');
  });
});
