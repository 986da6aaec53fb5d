import { priceLabel } from './credit-price.js';

describe('priceLabel', () => {
  it('says free, per call, per token, or both', () => {
    expect(priceLabel({})).toBe('free');
    expect(priceLabel({ creditsPerCall: 1 })).toBe('1 credit a call');
    expect(priceLabel({ creditsPerCall: 10 })).toBe('10 credits a call');
    expect(priceLabel({ creditsPer1kInput: 3, creditsPer1kOutput: 7 })).toBe(
      '3 in / 7 out per 1k tokens',
    );
    expect(priceLabel({ creditsPerCall: 2, creditsPer1kOutput: 5 })).toBe(
      '2 credits a call + 0 in / 5 out per 1k tokens',
    );
  });
});
