import { StatementBatcher } from './statement-batcher';

/** A statement runner that records the groups it was given and answers each item with `answer`. */
function recorder<I, O>(answer: (item: I) => O, fail?: (items: I[]) => boolean) {
  const groups: I[][] = [];
  const run = async (items: I[]): Promise<O[]> => {
    groups.push(items);
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (fail?.(items)) throw new Error(`refused: ${items.join(',')}`);
    return items.map(answer);
  };
  return { groups, run };
}

describe('StatementBatcher', () => {
  it('an item alone goes at once; items arriving meanwhile share the next statement', async () => {
    const { groups, run } = recorder((n: number) => n * 10);
    const batcher = new StatementBatcher(run, String, 1, 100);
    const first = batcher.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const rest = [2, 3, 4].map((n) => batcher.submit(n));
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30, 40]);
    expect(groups).toEqual([[1], [2, 3, 4]]);
  });

  it('never puts two items of one key in a statement, nor more than maxItems', async () => {
    const { groups, run } = recorder((s: string) => s.toUpperCase());
    const batcher = new StatementBatcher(run, (s) => s[0], 1, 2);
    const answers = await Promise.all(['a1', 'a2', 'b1', 'c1'].map((s) => batcher.submit(s)));
    expect(answers).toEqual(['A1', 'A2', 'B1', 'C1']);
    for (const group of groups) {
      expect(group.length).toBeLessThanOrEqual(2);
      expect(new Set(group.map((s) => s[0])).size).toBe(group.length);
    }
    expect(groups.flat().sort()).toEqual(['a1', 'a2', 'b1', 'c1']);
  });

  it("a failed statement runs each item alone: only the refused item's request fails", async () => {
    const { groups, run } = recorder(
      (n: number) => n,
      (items) => items.includes(3),
    );
    const batcher = new StatementBatcher(run, String, 1, 100);
    const results = await Promise.allSettled([1, 2, 3, 4].map((n) => batcher.submit(n)));
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect((results[2] as PromiseRejectedResult).reason.message).toBe('refused: 3');
    expect(groups[0]).toEqual([1, 2, 3, 4]);
    expect(groups.slice(1).every((group) => group.length === 1)).toBe(true);
  });
});
