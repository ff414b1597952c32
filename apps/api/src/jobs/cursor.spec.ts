import { ApiError } from '../common/api-error';
import { decodeCursor, encodeCursor } from './cursor';

describe('page cursor', () => {
  it('round-trips a job id', () => {
    const id = '3f0a5f0e-8a53-4a4a-9f39-1e4f2d6f1c11';
    expect(decodeCursor(encodeCursor(id))).toBe(id);
    expect(encodeCursor(id)).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('refuses anything else with VALIDATION_FAILED', () => {
    for (const bad of ['', 'abc', encodeCursor('not-a-uuid'), '!!!']) {
      expect(() => decodeCursor(bad)).toThrow(ApiError);
    }
  });
});
