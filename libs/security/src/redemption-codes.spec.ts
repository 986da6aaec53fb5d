import { generateRedemptionCode, normaliseRedemptionCode } from './redemption-codes.js';

describe('redemption codes', () => {
  it('are grouped, unambiguous and read back whatever the case, spaces or dashes', () => {
    const code = generateRedemptionCode();
    expect(code).toMatch(/^SY-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
    const normal = normaliseRedemptionCode(code);
    expect(normal).toHaveLength(12);
    expect(normaliseRedemptionCode(` ${code.toLowerCase().replace(/-/g, ' ')} `)).toBe(normal);
    expect(normaliseRedemptionCode(code.slice(3))).toBe(normal);
  });

  it('do not repeat', () => {
    const codes = new Set(Array.from({ length: 2000 }, generateRedemptionCode));
    expect(codes.size).toBe(2000);
  });
});
