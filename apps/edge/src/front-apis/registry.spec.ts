import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { RequestMethod } from '@nestjs/common';
import { GATEWAY_ENDPOINTS, GatewayError } from '@switchyard/contracts';
import { FORWARDED_APIS, FRONT_APIS, errorReplyAt, frontApiOf } from './registry.js';

// The table is the one place a front API is registered: every endpoint usage records name
// has exactly one module behind it, and no two APIs claim the same route.

describe('the front API registry', () => {
  it('has one forwarded API for every gateway endpoint, and none for anything else', () => {
    const endpoints = FORWARDED_APIS.map((api) => api.endpoint);
    expect([...endpoints].sort()).toEqual([...GATEWAY_ENDPOINTS].sort());
    for (const endpoint of GATEWAY_ENDPOINTS) expect(frontApiOf(endpoint).endpoint).toBe(endpoint);
  });

  it('gives every API a name of its own and at least one route', () => {
    const names = FRONT_APIS.map((api) => api.name);
    expect(new Set(names).size).toBe(names.length);
    for (const api of FRONT_APIS) expect(api.routes.length).toBeGreaterThan(0);
  });

  it('lets no two routes collide', () => {
    // `/v1/models/:model` and `/v1/models/x` would be one route to the router; a `::` is a
    // literal colon (Gemini's `models/{model}:{method}`), and a parameter may carry a pattern.
    const shape = (path: string) =>
      path
        .split('::')
        .map((piece) => piece.replace(/:\w+(\([^)]*\))?/g, ':'))
        .join('::');
    const routes = FRONT_APIS.flatMap((api) =>
      api.routes.map((route) => `${route.method} ${shape(route.path)}`),
    );
    expect(new Set(routes).size).toBe(routes.length);
    for (const route of routes) expect(route).toMatch(/^(GET|POST|DELETE) \/v1(beta)?\//);
  });

  it("declares a served API's routes as its controller serves them", () => {
    for (const api of FRONT_APIS) {
      if (api.kind !== 'served') continue;
      const prefix = String(Reflect.getMetadata(PATH_METADATA, api.controller));
      const prototype = api.controller.prototype as Record<string, unknown>;
      const served = Object.getOwnPropertyNames(prototype).flatMap((name) => {
        const handler = prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') return [];
        const path: unknown = Reflect.getMetadata(PATH_METADATA, handler);
        if (typeof path !== 'string') return [];
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
        return [`${method} /${prefix}/${path}`];
      });
      expect(served.sort()).toEqual(api.routes.map((r) => `${r.method} ${r.path}`).sort());
    }
  });

  it("shapes an error on a URL as the API it belongs to says, OpenAI's for any other", () => {
    const error = new GatewayError('invalid_request', 'no', 'model');
    const shapeAt = (url: string) => {
      const { body } = errorReplyAt(url, error);
      return Buffer.isBuffer(body) ? (JSON.parse(body.toString()) as object) : body;
    };
    for (const url of ['/v1/messages', '/v1/messages/count_tokens?beta=true', '/v1/messages/x'])
      expect(shapeAt(url)).toMatchObject({ type: 'error', error: { message: 'no' } });
    for (const url of ['/v1/chat/completions', '/v1/models/x', '/v1/responses', '/v1/unknown'])
      expect(shapeAt(url)).toEqual(error.toBody());
  });

  it("answers the model list's errors in Anthropic's shape to Anthropic's SDKs", () => {
    const error = new GatewayError('invalid_api_key', 'no');
    const { body } = errorReplyAt('/v1/models', error, { 'anthropic-version': '2023-06-01' });
    expect(JSON.parse((body as Buffer).toString())).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error', message: 'no' },
    });
  });

  it("shapes a failure as the URL's API has it", () => {
    const error = new GatewayError('unknown_url', 'Unknown request URL.');
    const shapeAt = (url: string): unknown => {
      const { body } = errorReplyAt(url, error);
      return Buffer.isBuffer(body) ? (JSON.parse(body.toString()) as unknown) : body;
    };
    const google = { error: { code: 404, status: 'NOT_FOUND', message: 'Unknown request URL.' } };
    expect(shapeAt('/v1beta/models/gemini-2.5-flash:foo?key=k')).toEqual(google);
    expect(shapeAt('/v1/models/gemini-2.5-flash:foo')).toEqual(google);
    expect(shapeAt('/v1beta/nothing')).toEqual(google);
    expect(shapeAt('/v1/messages/nothing')).toMatchObject({ type: 'error' });
    expect(shapeAt('/v1/models/gpt-4o')).toMatchObject({
      error: { type: 'invalid_request_error' },
    });
  });
});
