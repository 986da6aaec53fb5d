import { PriceTable } from './prices.js';

describe('PriceTable', () => {
  const table = new PriceTable([
    { model: 'fam*', inputPrice: 1, outputPrice: 1 },
    { model: 'fam-mini*', inputPrice: 2, outputPrice: 2 },
    { model: 'fam-mini-2024', inputPrice: 3, outputPrice: 3 },
    { model: 'solo', inputPrice: 4, outputPrice: 4 },
    { model: '*-all', inputPrice: 5, outputPrice: 5 },
    { model: '*mini-all', inputPrice: 6, outputPrice: 6 },
  ]);

  it('prefers the exact name, then the longest matching prefix', () => {
    expect(table.find('fam-mini-2024')).toMatchObject({ inputPrice: 3, match: 'exact' });
    expect(table.find('fam-mini-2025')).toMatchObject({
      inputPrice: 2,
      match: 'prefix',
      entry: 'fam-mini*',
    });
    expect(table.find('fam-max')).toMatchObject({ inputPrice: 1, match: 'prefix', entry: 'fam*' });
    expect(table.find('fam')).toMatchObject({ inputPrice: 1, match: 'prefix' });
    expect(table.find('solo')).toMatchObject({ inputPrice: 4, match: 'exact' });
  });

  it('prices suffix entries, the longer fixed part winning over a shorter prefix', () => {
    expect(table.find('gpt-4-all')).toMatchObject({
      inputPrice: 5,
      match: 'suffix',
      entry: '*-all',
    });
    expect(table.find('x-mini-all')).toMatchObject({ inputPrice: 6, entry: '*mini-all' });
    // Equal fixed parts (8 characters each): the prefix is preferred.
    expect(table.find('fam-mini-all')).toMatchObject({ inputPrice: 2, entry: 'fam-mini*' });
    expect(table.find('fam-all')).toMatchObject({ inputPrice: 5, entry: '*-all' });
  });

  it('finds nothing for a name no entry covers, nor for a prefix of an exact name', () => {
    expect(table.find('sol')).toBeUndefined();
    expect(table.find('solo-2')).toBeUndefined();
    expect(table.find('other')).toBeUndefined();
  });
});

describe('PriceTable.priceFor', () => {
  const table = new PriceTable([
    { model: 'listed', inputPrice: 1, outputPrice: 2 },
    { model: 'real-*', inputPrice: 3, outputPrice: 4 },
  ]);

  it('prices the requested model first, whatever the upstream served', () => {
    expect(table.priceFor('listed', 'real-1')).toMatchObject({ inputPrice: 1, entry: 'listed' });
  });

  it('falls back to the upstream model for a requested name the table does not list', () => {
    expect(table.priceFor('alias', 'real-1')).toMatchObject({ inputPrice: 3, entry: 'real-*' });
  });

  it('finds nothing when neither name has a price', () => {
    expect(table.priceFor('alias', null)).toBeUndefined();
    expect(table.priceFor('alias', 'other')).toBeUndefined();
  });
});
