import { boundHeapGrowth } from './heap';

describe('boundHeapGrowth', () => {
  it('leaves an explicit --heap-growing-percent of the command line alone', () => {
    expect(boundHeapGrowth(['--inspect', '--heap-growing-percent=20'])).toBe(false);
    expect(boundHeapGrowth(['--heap_growing_percent', '20'])).toBe(false);
  });

  it('sets the bound otherwise', () => {
    expect(boundHeapGrowth(['--enable-source-maps'])).toBe(true);
  });
});
