import {
  Body,
  Controller,
  Get,
  Module,
  Param,
  Post,
  Query,
  type DynamicModule,
} from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { BaseEnv, loadEnvironment } from '@switchyard/config';
import { createLogger, HealthModule, MetricsModule } from '@switchyard/observability';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsInt,
  IsOptional,
  IsString,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import request from 'supertest';
import { ApiExceptionFilter, apiValidationPipe } from './api-errors.js';
import { MAX_JSON_ARRAY_ITEMS, MAX_JSON_DEPTH, MAX_JSON_OBJECT_KEYS } from './json-body.js';
import { createService } from './start-service.js';

// Input that once cost a 500 or seconds of CPU, refused with a 400 that names the field
// before any DTO work (docs/architecture.md, "Bad input").

class TagDto {
  @IsString() @MaxLength(64) label!: string;
}

class CreateWidgetDto {
  @IsString() @MaxLength(200) name!: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => TagDto)
  tags?: TagDto[];
}

class SearchQuery {
  @IsOptional() @IsString() @MaxLength(100) q?: string;
  @IsOptional() @Type(() => Number) @IsInt() page?: number;
}

@Controller('widgets')
class WidgetsController {
  @Post()
  create(@Body() body: CreateWidgetDto): CreateWidgetDto {
    return body;
  }

  @Get()
  search(@Query() query: SearchQuery): SearchQuery {
    return query;
  }

  @Get(':name')
  one(@Param('name') name: string): { name: string } {
    return { name };
  }
}

@Module({})
class WidgetsModule {
  static forRoot(): DynamicModule {
    return {
      module: WidgetsModule,
      imports: [MetricsModule.forService('widgets'), HealthModule.register([])],
      controllers: [WidgetsController],
      providers: [
        { provide: APP_PIPE, useFactory: apiValidationPipe },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}

interface ErrorBody {
  error: { code: string; message: string; fields?: { field: string; message: string }[] };
}

describe('bad input to a service built by createService', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await createService(
      { name: 'web', environment: BaseEnv, module: () => WidgetsModule.forRoot(), port: () => 0 },
      loadEnvironment(BaseEnv, {}),
      createLogger({ service: 'widgets', level: 'silent' }),
    );
  });

  afterAll(() => app.close());

  async function post(body: string): Promise<{ status: number; body: ErrorBody }> {
    const response = await request(app.getHttpServer())
      .post('/widgets')
      .set('content-type', 'application/json')
      .send(body);
    return { status: response.status, body: response.body as ErrorBody };
  }

  function fieldsOf(body: ErrorBody): string[] {
    return (body.error.fields ?? []).map((f) => f.field);
  }

  it('still accepts a good body', async () => {
    const good = { name: 'w', tags: [{ label: 'a' }] };
    expect(await post(JSON.stringify(good))).toMatchObject({ status: 201, body: good });
  });

  it.each([
    ['an array', JSON.stringify(new Array(50_000).fill(0))],
    ['a string', '"widget"'],
    ['a number', '42'],
    ['null', 'null'],
  ])('refuses %s at the top level as "body must be a JSON object"', async (_label, body) => {
    const answer = await post(body);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('validation_failed');
    expect(fieldsOf(answer.body)).toEqual(['body']);
  });

  it('refuses an array too large for any DTO, naming it', async () => {
    const answer = await post(
      JSON.stringify({ name: 'w', tags: new Array(MAX_JSON_ARRAY_ITEMS + 1).fill(0) }),
    );
    expect(answer.status).toBe(400);
    expect(fieldsOf(answer.body)).toEqual(['tags']);
    expect(answer.body.error.message).toMatch(/more than 10000 items/);
  });

  it('refuses an object with 50,000 keys without naming each', async () => {
    const keys = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 0]));
    const answer = await post(JSON.stringify(keys));
    expect(answer.status).toBe(400);
    expect(fieldsOf(answer.body)).toEqual(['body']);
    expect(answer.body.error.message).toMatch(`more than ${MAX_JSON_OBJECT_KEYS} keys`);
  });

  it('names at most 20 unknown properties, and says how many more', async () => {
    const keys = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, 0]));
    const answer = await post(JSON.stringify({ name: 'w', ...keys }));
    expect(answer.status).toBe(400);
    expect(fieldsOf(answer.body)).toHaveLength(20);
    expect(answer.body.error.fields?.[0]).toEqual({
      field: 'k0',
      message: 'property k0 should not exist',
    });
    expect(answer.body.error.message).toMatch(/and 480 more$/);
  });

  it.each([
    ['arrays', '['.repeat(20_000) + ']'.repeat(20_000)],
    ['objects', '{"name":'.repeat(20_000) + '1' + '}'.repeat(20_000)],
  ])('refuses %s nested 20,000 levels deep', async (_label, body) => {
    const answer = await post(body);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('validation_failed');
    expect(answer.body.error.message).toMatch(`deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it.each([
    ['NUL', { name: 'a\u0000b' }, 'name', /NUL/],
    [
      'a lone surrogate',
      { name: 'w', tags: [{ label: 'ok' }, { label: '\ud800' }] },
      'tags[1].label',
      /lone surrogate/,
    ],
    ['a NUL in a key', { name: 'w', 'x\u0000': 1 }, 'body', /NUL/],
  ])('refuses %s in a string, naming the field', async (_label, body, field, message) => {
    const answer = await post(JSON.stringify(body));
    expect(answer.status).toBe(400);
    expect(fieldsOf(answer.body)).toEqual([field]);
    expect(answer.body.error.message).toMatch(message);
  });

  it('refuses keys that reach a prototype', async () => {
    const answer = await post('{"name":"w","__proto__":{"admin":true}}');
    expect(answer.status).toBe(400);
    expect(fieldsOf(answer.body)).toEqual(['__proto__']);
  });

  it('answers a broken body as invalid JSON, and an empty one as a missing body', async () => {
    expect((await post('{"name":')).body.error.code).toBe('invalid_json');
    const empty = await post('');
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('validation_failed');
    expect(fieldsOf(empty.body)).toContain('name');
  });

  it('refuses NUL in a query parameter or a path segment, naming it', async () => {
    const query = await request(app.getHttpServer()).get('/widgets?q=a%00b').expect(400);
    expect(fieldsOf(query.body as ErrorBody)).toEqual(['q']);
    const path = await request(app.getHttpServer()).get('/widgets/%00').expect(400);
    expect(fieldsOf(path.body as ErrorBody)).toEqual(['name']);
    await request(app.getHttpServer()).get('/widgets?q=fine').expect(200);
  });

  it('refuses a URL whose percent-encoding does not decode, in the API shape', async () => {
    const answer = await request(app.getHttpServer()).get('/widgets/%zz').expect(400);
    expect(answer.body).toEqual({
      error: {
        code: 'validation_failed',
        message: 'The request URL is not valid: a percent-encoded part of it does not decode',
      },
    });
  });

  it('refuses a query parameter the DTO does not declare, as unknown', async () => {
    const answer = await request(app.getHttpServer()).get('/widgets?other=1').expect(400);
    expect(fieldsOf(answer.body as ErrorBody)).toEqual(['other']);
  });
});
