import { Logger, type LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { loadEnvironment, MeteringEnv } from '@switchyard/config';
import { SqlDatabaseModule } from '@switchyard/db/sql';
import { ModelPricesRepository, PriceCache } from '@switchyard/gateway-store/prices';
import { databaseUrl, setPrice } from '../testing/metering.fixture.js';
import { PriceBook } from './price-book.js';

describe('PriceBook', () => {
  let module: TestingModule;
  let cache: PriceCache;
  const warnings: unknown[] = [];
  const capture: LoggerService = {
    log: () => undefined,
    error: () => undefined,
    warn: (message: unknown) => warnings.push(message),
  };
  let book: PriceBook;

  beforeAll(async () => {
    await setPrice('pb-exact', 11, 12);
    await setPrice('pb-family*', 21, 22);
    await setPrice('pb-family-pro*', 31, 32);
    module = await Test.createTestingModule({
      imports: [SqlDatabaseModule.forRoot({ url: databaseUrl(), poolSize: 2 })],
      providers: [ModelPricesRepository, PriceCache],
    })
      .setLogger(capture)
      .compile();
    cache = module.get(PriceCache);
    await cache.refresh();
    book = new PriceBook(cache, loadEnvironment(MeteringEnv, { DEFAULT_MODEL_PRICE: '5' }));
  });

  afterAll(async () => {
    await module.close();
    Logger.overrideLogger(false);
  });

  it('bills a model without a price at a non-zero default unless the operator sets one', () => {
    const unconfigured = new PriceBook(cache, loadEnvironment(MeteringEnv, {}));
    // one-api's default ratio of 30: $0.06 per thousand tokens, in micro-dollars per million.
    expect(unconfigured.priceFor('pb-nothing', null)).toEqual({
      inputPrice: 60_000_000,
      outputPrice: 60_000_000,
      match: 'default',
      entry: null,
    });
  });

  it('resolves exact names, prefixes and the default from the database', () => {
    expect(book.priceFor('pb-exact', null)).toEqual({
      inputPrice: 11,
      outputPrice: 12,
      match: 'exact',
      entry: 'pb-exact',
    });
    expect(book.priceFor('pb-family-pro-2', null)).toMatchObject({
      inputPrice: 31,
      match: 'prefix',
    });
    expect(book.priceFor('pb-family-2', null)).toMatchObject({ inputPrice: 21, match: 'prefix' });
    expect(book.priceFor('pb-nothing', null)).toEqual({
      inputPrice: 5,
      outputPrice: 5,
      match: 'default',
      entry: null,
    });
  });

  it('falls back to the model the upstream resolved the request to', () => {
    expect(book.priceFor('my-alias', 'pb-family-pro-x')).toMatchObject({
      inputPrice: 31,
      match: 'prefix',
    });
    // The requested name wins when it has a price of its own.
    expect(book.priceFor('pb-exact', 'pb-family-pro-x')).toMatchObject({ inputPrice: 11 });
  });

  it('ships prices for common model families', () => {
    expect(book.priceFor('gpt-4o', null)).toMatchObject({
      inputPrice: 2_500_000,
      outputPrice: 10_000_000,
    });
    expect(book.priceFor('gpt-4o-2024-08-06', null)).toMatchObject({ inputPrice: 2_500_000 });
    expect(book.priceFor('gpt-4o-2024-05-13', null)).toMatchObject({
      inputPrice: 5_000_000,
      match: 'exact',
    });
    expect(book.priceFor('gpt-4o-mini-2024-07-18', null)).toMatchObject({ inputPrice: 150_000 });
    expect(book.priceFor('gpt-4.1-nano', null)).toMatchObject({ inputPrice: 100_000 });
    expect(book.priceFor('o3-mini-2025-01-31', null)).toMatchObject({ inputPrice: 1_100_000 });
    expect(book.priceFor('gpt-3.5-turbo-0125', null)).toMatchObject({ inputPrice: 500_000 });
    expect(book.priceFor('text-embedding-3-small', null)).toMatchObject({
      inputPrice: 20_000,
      outputPrice: 0,
    });
    expect(book.priceFor('dall-e-3', null)).toMatchObject({ outputPrice: 40_000_000 });
  });

  it('logs a model without a price once, until the table is read again', async () => {
    warnings.length = 0;
    book.priceFor('pb-unpriced-a', null);
    book.priceFor('pb-unpriced-a', null);
    book.priceFor('pb-unpriced-b', null);
    const about = (model: string) =>
      warnings.filter((w) => (w as { model?: string }).model === model);
    expect(about('pb-unpriced-a')).toHaveLength(1);
    expect(about('pb-unpriced-b')).toHaveLength(1);

    await setPrice('pb-unpriced-b', 7, 8);
    await cache.refresh();
    expect(book.priceFor('pb-unpriced-b', null)).toMatchObject({ inputPrice: 7, match: 'exact' });
    book.priceFor('pb-unpriced-a', null);
    expect(about('pb-unpriced-a')).toHaveLength(2);
  });
});
