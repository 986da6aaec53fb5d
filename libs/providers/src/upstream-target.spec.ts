import { upstreamTarget } from './channel-client.js';

describe('upstreamTarget', () => {
  it.each([
    ['https://api.example.com', 'https://api.example.com', '/v1/chat/completions'],
    ['https://api.example.com/', 'https://api.example.com', '/v1/chat/completions'],
    ['https://api.example.com/v1', 'https://api.example.com', '/v1/chat/completions'],
    [
      'http://relay.example:8080/openai/',
      'http://relay.example:8080',
      '/openai/v1/chat/completions',
    ],
  ])('%s', (baseUrl, origin, path) => {
    expect(upstreamTarget(baseUrl, '/chat/completions')).toEqual({ origin, path });
  });
});
