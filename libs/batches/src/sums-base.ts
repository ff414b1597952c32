import type { SumsBase } from './sums/sum-parser';

/**
 * The base of a sums batch as stored (`s3://bucket/` + a prefix ending in "/" or empty, or an
 * http(s) URL ending in "/"), as the SUM parser takes it. A directory base needs its real path
 * (resolveDirectory): the caller handles that one.
 */
export function remoteSumsBase(base: string): SumsBase {
  const s3 = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(base);
  if (s3) return { type: 's3', bucket: s3[1], prefix: s3[2] };
  return { type: 'http', prefix: base };
}

/** A base as given in a request, in its stored form: a prefix or URL gets its closing "/". */
export function normalizeSumsBase(base: string): string {
  if (base.startsWith('/')) return base;
  const s3 = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(base);
  if (s3) return `s3://${s3[1]}/${s3[2] === '' || s3[2].endsWith('/') ? s3[2] : `${s3[2]}/`}`;
  return base.endsWith('/') ? base : `${base}/`;
}
