import { jsonbParam } from './raw-sql';

describe('jsonbParam', () => {
  it('is jsonb in binary form: version byte 1, then the UTF-8 JSON text', () => {
    const value = [{ name: 'é/"x"\n', size: 4096, source: { type: 'file' } }, { name: null }];
    const bytes = jsonbParam(value);
    expect(bytes[0]).toBe(1);
    expect(JSON.parse(bytes.subarray(1).toString('utf8'))).toEqual(value);
    expect(bytes.length).toBe(1 + Buffer.byteLength(JSON.stringify(value)));
  });
});
