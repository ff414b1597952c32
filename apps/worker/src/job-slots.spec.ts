import { JobSlots } from './job-slots';

describe('JobSlots', () => {
  const limits = { small: 16, large: 2, smallJobBytes: 4096 };

  function slots() {
    const fetchLimits: number[] = [];
    return { fetchLimits, slots: new JobSlots(limits, (jobs) => fetchLimits.push(jobs)) };
  }

  it('BullMQ fetches up to the larger of the two limits', () => {
    expect(JobSlots.fetchLimit(limits)).toBe(16);
    expect(JobSlots.fetchLimit({ small: 1, large: 4 })).toBe(4);
  });

  it('small jobs (size known, one read) never wait for a large slot', () => {
    const { slots: s, fetchLimits } = slots();
    const frees = Array.from({ length: 40 }, () => s.take(4096));
    expect(frees.every((free) => free !== null)).toBe(true);
    expect(s.take(undefined)).not.toBeNull(); // the large slots are untouched
    expect(fetchLimits).toEqual([]);
  });

  it('large or unknown sizes take the large slots; when all are taken BullMQ fetches only `large`', () => {
    const { slots: s, fetchLimits } = slots();
    const first = s.take(4097);
    const second = s.take(undefined);
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(fetchLimits).toEqual([2]);
    expect(s.take(1 << 30)).toBeNull(); // handed back
    expect(s.take(100)).not.toBeNull(); // a small one still runs
    second!();
    second!(); // freeing twice frees once
    expect(fetchLimits).toEqual([2, 16]);
    const third = s.take(undefined);
    expect(third).not.toBeNull();
    expect(s.take(undefined)).toBeNull();
    first!();
    third!();
    expect(fetchLimits).toEqual([2, 16, 2, 16]);
  });
});
