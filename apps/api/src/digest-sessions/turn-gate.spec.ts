import { TurnGate } from './turn-gate';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnGate', () => {
  it('lets perTurn requests on at once, the others in later turns, in order', async () => {
    const gate = new TurnGate(2);
    const started: number[] = [];
    const requests = Array.from({ length: 5 }, (_, i) => {
      const wait = gate.enter();
      if (!wait) started.push(i);
      return wait?.then(() => started.push(i));
    });
    expect(started).toEqual([0, 1]);
    await nextTurn();
    expect(started).toEqual([0, 1, 2, 3]);
    await nextTurn();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    await Promise.all(requests);
  });

  it('never holds a lone request', async () => {
    const gate = new TurnGate(1);
    for (let i = 0; i < 3; i++) {
      expect(gate.enter()).toBeUndefined();
      await nextTurn();
    }
  });
});
