import { isSpread, longSlope, median, quantile, quartiles } from './stats';

describe('benchmark statistics (hand-computed)', () => {
  it('quartiles of an odd count are order statistics', () => {
    // sorted: 1 2 3 4 5 6 7 8 9; positions 0.25·8 = 2, 0.5·8 = 4, 0.75·8 = 6
    expect(quartiles([9, 1, 8, 2, 7, 3, 6, 4, 5])).toEqual({ q1: 3, median: 5, q3: 7 });
  });

  it('quartiles interpolate between order statistics', () => {
    // sorted: 10 20 30 40; positions 0.75 → 17.5, 1.5 → 25, 2.25 → 32.5
    expect(quartiles([40, 10, 30, 20])).toEqual({ q1: 17.5, median: 25, q3: 32.5 });
    // sorted: 1 2 4 8 16 32; positions 1.25 → 2.5, 2.5 → 6, 3.75 → 14
    expect(quartiles([32, 1, 16, 2, 8, 4])).toEqual({ q1: 2.5, median: 6, q3: 14 });
  });

  it('one value is every quantile; no value is an error', () => {
    expect(quartiles([7])).toEqual({ q1: 7, median: 7, q3: 7 });
    expect(() => quantile([], 0.5)).toThrow(RangeError);
    expect(median([5, 1, 3, 2])).toBe(2.5);
  });

  it('the long-message slope cancels the fixed cost', () => {
    // 1000 ticks fixed + 2.5 ticks/byte: 16384 → 41960, 65536 → 164840
    const slope = longSlope(
      { length: 16384, cycles: { q1: 41000, median: 41960, q3: 43000 } },
      { length: 65536, cycles: { q1: 163880, median: 164840, q3: 166040 } },
    );
    expect(slope).toEqual({ q1: 2.5, median: 2.5, q3: (166040 - 43000) / 49152 });
    expect(() => longSlope({ length: 10, cycles: slope }, { length: 10, cycles: slope })).toThrow(
      RangeError,
    );
  });

  it('the slope is clamped at 0 and kept in order when noise crosses the quartiles', () => {
    const slope = longSlope(
      { length: 100, cycles: { q1: 500, median: 600, q3: 900 } },
      { length: 200, cycles: { q1: 400, median: 800, q3: 1000 } },
    );
    expect(slope).toEqual({ q1: 0, median: 1, q3: 2 });
  });

  it('flags quartiles more than 10 % of the median apart', () => {
    expect(isSpread({ q1: 95, median: 100, q3: 105 })).toBe(false); // 10 % exactly
    expect(isSpread({ q1: 95, median: 100, q3: 105.5 })).toBe(true);
  });
});
