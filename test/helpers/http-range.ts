import type { ServerResponse } from 'node:http';

/**
 * For test servers: the bounds of a `bytes=start-[end]` range (`match` of /^bytes=(\d+)-(\d*)$/)
 * of `length` bytes, the end clamped. Past the end it answers 416 itself and returns null.
 */
export function rangeBounds(
  match: RegExpExecArray,
  length: number,
  res: ServerResponse,
): { start: number; end: number; contentRange: string } | null {
  const start = Number(match[1]);
  const end = match[2] ? Math.min(Number(match[2]), length - 1) : length - 1;
  if (start >= length) {
    res.writeHead(416, { 'content-range': `bytes */${length}` });
    res.end();
    return null;
  }
  return { start, end, contentRange: `bytes ${start}-${end}/${length}` };
}
