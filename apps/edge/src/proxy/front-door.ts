import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import proxyAddr from '@fastify/proxy-addr';
import { Inject, Injectable } from '@nestjs/common';
import { GatewayError, bodyTooLargeMessage } from '@switchyard/contracts';
import {
  REQUEST_ID_HEADER,
  TRACE_ID_HEADER,
  currentTraceId,
  tracingActive,
} from '@switchyard/observability';
import {
  bodyLeftUnread,
  drainUnreadBodyOf,
  type FrontDoor as ServedHere,
  type FrontDoorHooks,
} from '@switchyard/service';
import { answerWithError } from '../errors/openai-exception.filter.js';
import { type ForwardedFrontApi } from '../front-apis/front-api.js';
import { FORWARDED_APIS } from '../front-apis/registry.js';
import { type ClientRequest } from './exchange.js';
import { ProxyService } from './proxy.service.js';

// The forwarded front APIs (front-apis/registry.ts) are served on Node's HTTP server itself,
// ahead of Fastify (docs/architecture.md, "The front door"): their routes are a table
// lookup, their body is read here with its limit, and their answer is written to Node's
// response by the relay. What Fastify's hooks do for the other routes is done here for
// these: the request id, the trace id, the HTTP metrics and the access log, the body
// limit and the draining of a body left unread, the client's address behind trusted
// proxies, and a 503 once the edge is shutting down.

export const FRONT_DOOR_OPTIONS = Symbol('FRONT_DOOR_OPTIONS');

export interface FrontDoorOptions {
  /** Bytes a body may have, unless its route has a limit of its own. */
  bodyLimit: number;
  /** Proxies (IPs or CIDRs) whose X-Forwarded-For names the client. */
  trustedProxies: string[];
}

interface Route {
  api: ForwardedFrontApi;
  /** The route's pattern, as the metrics name it. */
  pattern: string;
  bodyLimit: number;
}

/** A route with one path parameter (Gemini's `models/{model}:{method}`). */
interface ParameterRoute extends Route {
  prefix: string;
  name: string;
  /** What the parameter's value must be, when the pattern says (`:model(^[\w.@-]+)`). */
  value: RegExp;
  suffix: string;
}

/** A request the front door took, before its body is read. */
interface Arrival {
  route: Route;
  /** Null for a route without any; undefined when the URL's does not decode. */
  params: Record<string, string> | null | undefined;
  id: string;
  url: string;
  /** Where the query starts in `url` (-1: it has none). */
  queryAt: number;
  /** Whether the edge was shutting down when it came. */
  shuttingDown: boolean;
}

@Injectable()
export class FrontDoor {
  private readonly exact = new Map<string, Route>();
  private readonly withParameter: ParameterRoute[] = [];
  private readonly trusted: (address: string, hop: number) => boolean;
  private readonly traced = tracingActive();

  constructor(
    private readonly proxy: ProxyService,
    @Inject(FRONT_DOOR_OPTIONS) options: FrontDoorOptions,
  ) {
    this.trusted = proxyAddr.compile(options.trustedProxies);
    for (const api of FORWARDED_APIS) {
      for (const { method, path, bodyLimit } of api.routes) {
        if (method !== 'POST') throw new Error(`${api.name}: a forwarded route is a POST`);
        const route = { api, pattern: path, bodyLimit: bodyLimit ?? options.bodyLimit };
        // `/prefix/:name(regex)suffix`, as Fastify's router reads it.
        const parameter = /^(.*?):(\w+)(?:\((.*?)\))?(.*)$/.exec(path);
        if (!parameter) this.exact.set(path, route);
        else
          this.withParameter.push({
            ...route,
            prefix: parameter[1]!,
            name: parameter[2]!,
            value: new RegExp(`^(?:${(parameter[3] ?? '.+').replace(/^\^/, '')})$`),
            // `::` is a literal colon in a route pattern.
            suffix: parameter[4]!.replaceAll('::', ':'),
          });
      }
    }
  }

  /** The front door of the edge's server, with the service's metrics, access log and shutdown. */
  servedHere({ finished, shuttingDown }: FrontDoorHooks): ServedHere {
    return (request, response) => {
      if (request.method !== 'POST') return false;
      const url = request.url ?? '/';
      const queryAt = url.indexOf('?');
      const path = queryAt < 0 ? url : url.slice(0, queryAt);
      const exact = this.exact.get(path);
      const found = exact ? { route: exact, params: null } : this.matchParameter(path);
      if (!found) return false;
      const startedAt = performance.now();
      const id = randomUUID();
      response.once('finish', () =>
        finished({
          id,
          method: 'POST',
          route: found.route.pattern,
          status: response.statusCode,
          elapsedMs: performance.now() - startedAt,
          raw: request,
        }),
      );
      const arrival = { ...found, id, url, queryAt, shuttingDown: shuttingDown() };
      void this.serve(arrival, request, response);
      return true;
    };
  }

  private async serve(
    { route, params, id, url, queryAt, shuttingDown }: Arrival,
    raw: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    response.setHeader(REQUEST_ID_HEADER, id);
    if (route.api.requestIdHeader) response.setHeader(route.api.requestIdHeader, id);
    // The HTTP server span is active here: its trace id lets a caller find the trace.
    const traceId = this.traced ? currentTraceId() : undefined;
    if (traceId) response.setHeader(TRACE_ID_HEADER, traceId);
    try {
      if (shuttingDown) {
        response.setHeader('connection', 'close');
        throw new GatewayError(
          'service_unavailable',
          'This gateway instance is shutting down; retry and another will answer.',
        );
      }
      if (params === undefined)
        throw new GatewayError(
          'invalid_request',
          'The request URL is not valid: a percent-encoded part of it does not decode',
        );
      const body = await readBody(raw, route.bodyLimit);
      if (body === null) return;
      const request: ClientRequest = {
        id,
        method: 'POST',
        url,
        headers: raw.headers,
        params: params ?? {},
        query: queryAt < 0 ? {} : parseQuery(url.slice(queryAt + 1)),
        ip: proxyAddr(raw, this.trusted),
        body,
        raw,
      };
      await this.proxy.handle(route.api, request, response);
    } catch (error) {
      answerWithError(response, { method: 'POST', url, headers: raw.headers }, error);
      if (bodyLeftUnread(raw)) drainUnreadBodyOf(raw, route.bodyLimit);
    }
  }

  /** The route with a path parameter that `path` matches, and the parameter's value. */
  private matchParameter(path: string): Pick<Arrival, 'route' | 'params'> | undefined {
    for (const route of this.withParameter) {
      if (
        path.length <= route.prefix.length + route.suffix.length ||
        !path.startsWith(route.prefix) ||
        !path.endsWith(route.suffix)
      )
        continue;
      let value = path.slice(route.prefix.length, path.length - route.suffix.length);
      if (value.includes('/')) continue;
      try {
        value = decodeURIComponent(value);
      } catch {
        return { route, params: undefined };
      }
      if (route.value.test(value)) return { route, params: { [route.name]: value } };
    }
    return undefined;
  }
}

/**
 * A request's body, read whole up to `limit` bytes: a larger one is refused by its
 * Content-Length before any of it is read, or as soon as it passes the limit. Null when the
 * client left before sending all of it.
 */
function readBody(raw: IncomingMessage, limit: number): Promise<Buffer | null> {
  const declared = Number(raw.headers['content-length']);
  if (declared > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) {
        cleanUp();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanUp();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length));
    };
    const onClose = () => {
      cleanUp();
      resolve(null);
    };
    const cleanUp = () => {
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('close', onClose);
    };
    raw.on('data', onData);
    raw.once('end', onEnd);
    // Closed before its end: the client left, and there is no one to answer.
    raw.once('close', onClose);
  });
}

function tooLarge(): GatewayError {
  return new GatewayError('request_too_large', bodyTooLargeMessage());
}
