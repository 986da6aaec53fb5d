import { type Server } from 'node:http';
import { connect } from 'node:net';
import { type AddressInfo } from 'node:net';
import { Body, Controller, Get, Module, Post, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { BaseEnv, loadEnvironment } from '@switchyard/config';
import { ApiError } from '@switchyard/contracts';
import { createLogger, HealthModule, MetricsModule } from '@switchyard/observability';
import { IsInt, IsString, Min } from 'class-validator';
import request from 'supertest';
import { ApiExceptionFilter, apiValidationPipe } from './api-errors.js';
import { createService, serveOperations } from './start-service.js';

class CreateThingDto {
  @IsString() name!: string;
  @IsInt() @Min(1) size!: number;
}

@Controller('things')
class ThingsController {
  @Post()
  create(@Body() body: CreateThingDto): CreateThingDto {
    return body;
  }

  @Get('missing')
  missing(): never {
    throw new ApiError('not_found', 'No thing 7');
  }

  @Get('broken')
  broken(): never {
    throw new Error('database password is hunter2');
  }

  @Get('busy')
  busy(): never {
    throw new ApiError('too_many_attempts', 'Slow down', undefined, { retryAfterSeconds: 42 });
  }
}

@Module({})
class ThingsModule {
  static forRoot(): DynamicModule {
    return {
      module: ThingsModule,
      imports: [MetricsModule.forService('things'), HealthModule.register([])],
      controllers: [ThingsController],
      providers: [
        { provide: APP_PIPE, useFactory: apiValidationPipe },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}

describe('a service built by createService', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await createService(
      { name: 'web', environment: BaseEnv, module: () => ThingsModule.forRoot(), port: () => 0 },
      loadEnvironment(BaseEnv, {}),
      createLogger({ service: 'things', level: 'silent' }),
    );
  });

  afterAll(() => app.close());

  it('names each bad field of a body, and refuses unknown ones', async () => {
    const response = await request(app.getHttpServer())
      .post('/things')
      .send({ name: 3, size: 0, extra: true })
      .expect(400);
    expect(response.body.error.code).toBe('validation_failed');
    expect(response.body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'extra',
      'name',
      'size',
    ]);
  });

  it('answers malformed JSON with 400 invalid_json, and an unknown route with 404', async () => {
    const bad = await request(app.getHttpServer())
      .post('/things')
      .set('content-type', 'application/json')
      .send('{"name":')
      .expect(400);
    expect(bad.body.error.code).toBe('invalid_json');
    expect((await request(app.getHttpServer()).get('/nowhere').expect(404)).body.error.code).toBe(
      'not_found',
    );
  });

  it('renders ApiError with its code, and hides what an unexpected error says', async () => {
    expect((await request(app.getHttpServer()).get('/things/missing').expect(404)).body).toEqual({
      error: { code: 'not_found', message: 'No thing 7' },
    });
    const broken = await request(app.getHttpServer()).get('/things/broken').expect(500);
    expect(broken.body.error.code).toBe('internal_error');
    expect(JSON.stringify(broken.body)).not.toContain('hunter2');
  });

  it('sends Retry-After when an ApiError says how long to wait, and only then', async () => {
    const busy = await request(app.getHttpServer()).get('/things/busy').expect(429);
    expect(busy.headers['retry-after']).toBe('42');
    expect(busy.body).toEqual({ error: { code: 'too_many_attempts', message: 'Slow down' } });
    const missing = await request(app.getHttpServer()).get('/things/missing').expect(404);
    expect(missing.headers).not.toHaveProperty('retry-after');
  });

  it('puts an x-request-id on every response, keeping a caller-provided one', async () => {
    const given = await request(app.getHttpServer())
      .get('/healthz')
      .set('x-request-id', 'abc-123')
      .expect(200);
    expect(given.headers['x-request-id']).toBe('abc-123');
    const made = await request(app.getHttpServer())
      .get('/healthz')
      .set('x-request-id', 'not valid!')
      .expect(200);
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves readiness and Prometheus metrics', async () => {
    expect((await request(app.getHttpServer()).get('/readyz').expect(200)).body.status).toBe('ok');
    const metrics = await request(app.getHttpServer()).get('/metrics').expect(200);
    expect(metrics.text).toContain('http_requests_total');
    expect(metrics.text).toContain('process_cpu_seconds_total');
  });
});

describe('a service with an operations port', () => {
  let app: NestFastifyApplication;
  let ops: Server;
  let opsUrl = '';

  beforeAll(async () => {
    app = await createService(
      {
        name: 'web',
        environment: BaseEnv,
        module: () => ThingsModule.forRoot(),
        port: () => 0,
        opsPort: () => 0,
      },
      loadEnvironment(BaseEnv, {}),
      createLogger({ service: 'things', level: 'silent' }),
    );
    ops = await serveOperations(app, 0, '127.0.0.1');
    opsUrl = `http://127.0.0.1:${(ops.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    ops.close();
    await app.close();
  });

  it('answers /metrics on the operations port and 404 on the public one', async () => {
    const open = await request(app.getHttpServer()).get('/metrics').expect(404);
    expect(open.text).not.toContain('process_cpu_seconds_total');
    await request(app.getHttpServer()).get('/healthz').expect(200);
    const metrics = await fetch(`${opsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(await metrics.text()).toContain('process_cpu_seconds_total');
    expect(await (await fetch(`${opsUrl}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = (await (await fetch(`${opsUrl}/readyz`)).json()) as { status: string };
    expect(ready.status).toBe('ok');
  });

  it('serves nothing else there', async () => {
    const missing = await fetch(`${opsUrl}/things/missing`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect((await fetch(`${opsUrl}/metrics`, { method: 'POST' })).status).toBe(405);
  });
});

describe('a reply sent before the body was read', () => {
  let app: NestFastifyApplication;
  let url = '';

  beforeAll(async () => {
    app = await createService(
      {
        name: 'web',
        environment: BaseEnv,
        module: () => ThingsModule.forRoot(),
        port: () => 0,
        bodyLimit: () => 1024,
      },
      loadEnvironment(BaseEnv, {}),
      createLogger({ service: 'things', level: 'silent' }),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = await app.getUrl();
    url = url.replace('[::1]', '127.0.0.1');
  });

  afterAll(() => app.close());

  it('reaches Node fetch: the rest of the upload is read, not cut', async () => {
    const response = await fetch(`${url}/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(8 * 1024 * 1024), size: 1 }),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'payload_too_large',
    );
    // The connection stays usable.
    await fetch(`${url}/healthz`).then((ok) => expect(ok.status).toBe(200));
  });

  it('closes the connection of an upload that goes on past the bound', async () => {
    // A bare socket: it writes as long as the server reads, whatever the server answered.
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    let answer = '';
    socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
    // Destroyed with bytes unread, the connection is reset: 'close' follows the error.
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      'POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${2 ** 40}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    let written = 0;
    const started = performance.now();
    const pump = () => {
      while (!socket.destroyed && written < 1024 * chunk.length) {
        written += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    pump();
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    // Cut by the byte bound (a few times the limit, at least 16 MiB), long before the time
    // bound, and never after the whole TiB.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(written).toBeLessThan(64 * chunk.length);
  });
});

/** A logger at info whose lines land in `lines`. */
function loggerInto(lines: string[]) {
  return createLogger({
    service: 'things',
    level: 'info',
    destination: { write: (line: string) => void lines.push(line) },
  });
}

/** The access log's lines among `lines`: each request's route and status. */
function requestLines(lines: string[]): { route: string; status: number }[] {
  return lines
    .map((line) => JSON.parse(line) as { message: string; route: string; status: number })
    .filter((entry) => entry.message === 'request')
    .map(({ route, status }) => ({ route, status }));
}

describe('the access log', () => {
  async function requestsLogged(logSuccessfulRequests: boolean | undefined): Promise<unknown[]> {
    const lines: string[] = [];
    const app = await createService(
      {
        name: 'web',
        environment: BaseEnv,
        module: () => ThingsModule.forRoot(),
        port: () => 0,
        logSuccessfulRequests,
      },
      loadEnvironment(BaseEnv, {}),
      loggerInto(lines),
    );
    try {
      await request(app.getHttpServer()).post('/things').send({ name: 'a', size: 1 }).expect(201);
      await request(app.getHttpServer()).get('/things/missing').expect(404);
      await request(app.getHttpServer()).get('/healthz').expect(200);
    } finally {
      await app.close();
    }
    return requestLines(lines);
  }

  it('has a line for every request but probes and scrapes, by default', async () => {
    expect(await requestsLogged(undefined)).toEqual([
      { route: '/things', status: 201 },
      { route: '/things/missing', status: 404 },
    ]);
  });

  it('keeps only the failures at info when successes are not logged', async () => {
    expect(await requestsLogged(false)).toEqual([{ route: '/things/missing', status: 404 }]);
  });
});

describe('a front door', () => {
  it('serves its own requests ahead of Fastify, with their metrics and access log, and passes the rest', async () => {
    const lines: string[] = [];
    let shuttingDown: (() => boolean) | undefined;
    const app = await createService(
      {
        name: 'web',
        environment: BaseEnv,
        module: () => ThingsModule.forRoot(),
        port: () => 0,
        frontDoor: (_app, hooks) => {
          shuttingDown = hooks.shuttingDown;
          return (incoming, response) => {
            if (incoming.url !== '/door') return false;
            const startedAt = performance.now();
            response.once('finish', () =>
              hooks.finished({
                id: 'door-1',
                method: incoming.method ?? 'GET',
                route: '/door',
                status: response.statusCode,
                elapsedMs: performance.now() - startedAt,
                raw: incoming,
              }),
            );
            response.writeHead(418, { 'content-type': 'text/plain' }).end('through the door');
            return true;
          };
        },
      },
      loadEnvironment(BaseEnv, {}),
      loggerInto(lines),
    );
    try {
      const door = await request(app.getHttpServer()).get('/door').expect(418);
      expect(door.text).toBe('through the door');
      // Fastify's hooks never saw it: no request id of theirs.
      expect(door.headers['x-request-id']).toBeUndefined();
      await request(app.getHttpServer()).post('/things').send({ name: 'a', size: 1 }).expect(201);
      expect(shuttingDown?.()).toBe(false);
      const metrics = (await request(app.getHttpServer()).get('/metrics').expect(200)).text;
      expect(metrics).toMatch(/http_requests_total\{[^}]*route="\/door"[^}]*status="418"[^}]*\} 1/);
      expect(metrics).toMatch(
        /http_requests_total\{[^}]*route="\/things"[^}]*status="201"[^}]*\} 1/,
      );
    } finally {
      await app.close();
    }
    expect(requestLines(lines)).toEqual([
      { route: '/door', status: 418 },
      { route: '/things', status: 201 },
    ]);
  });
});
