import { bigintAsNumber } from './bigint.transformer';

describe('bigintAsNumber', () => {
  it('turns pg bigint strings into numbers', () => {
    expect(bigintAsNumber.from('0')).toBe(0);
    expect(bigintAsNumber.from('21474836480')).toBe(21474836480);
    expect(bigintAsNumber.from(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(bigintAsNumber.from(null)).toBeNull();
  });

  it('refuses values a number cannot hold exactly', () => {
    expect(() => bigintAsNumber.from('9007199254740993')).toThrow(RangeError);
  });
});
