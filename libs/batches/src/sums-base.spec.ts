import { normalizeSumsBase, remoteSumsBase } from './sums-base';

describe('sums bases', () => {
  it('closes prefixes and URLs with "/" and leaves directories alone', () => {
    expect(normalizeSumsBase('s3://bucket')).toBe('s3://bucket/');
    expect(normalizeSumsBase('s3://bucket/')).toBe('s3://bucket/');
    expect(normalizeSumsBase('s3://bucket/photos')).toBe('s3://bucket/photos/');
    expect(normalizeSumsBase('s3://bucket/photos/')).toBe('s3://bucket/photos/');
    expect(normalizeSumsBase('https://h.example/a')).toBe('https://h.example/a/');
    expect(normalizeSumsBase('/srv/data')).toBe('/srv/data');
  });

  it('reads a stored base as the SUM parser takes it', () => {
    expect(remoteSumsBase('s3://bucket/')).toEqual({ type: 's3', bucket: 'bucket', prefix: '' });
    expect(remoteSumsBase('s3://bucket/a/b/')).toEqual({
      type: 's3',
      bucket: 'bucket',
      prefix: 'a/b/',
    });
    expect(remoteSumsBase('https://h.example/a/')).toEqual({
      type: 'http',
      prefix: 'https://h.example/a/',
    });
  });
});
