/**
 * A small glob matcher for the directory source's `include` option (Node 20's path.matchesGlob is
 * still experimental and warns). `*` and `?` match within one path segment, `**` as a whole
 * segment matches any number of segments (none included), `[abc]`, `[a-z]`, `[!x]`/`[^x]` match one
 * character of a segment, `\` escapes the next character. A pattern without `/` is matched against
 * the file's own name at any depth (as in .gitignore); one with `/` against the whole relative path.
 */
export class Glob {
  private readonly regex: RegExp;
  private readonly basenameOnly: boolean;

  constructor(readonly pattern: string) {
    if (pattern === '') throw new GlobError('empty glob pattern');
    this.basenameOnly = !pattern.includes('/');
    this.regex = new RegExp(`^${compile(pattern)}$`, 'su');
  }

  /** `path`: relative, segments joined by `/`. */
  matches(path: string): boolean {
    const subject = this.basenameOnly ? path.slice(path.lastIndexOf('/') + 1) : path;
    return this.regex.test(subject);
  }
}

export class GlobError extends Error {
  override readonly name = 'GlobError';
}

function compile(pattern: string): string {
  const segments = pattern.split('/');
  let out = '';
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (segment === '**') {
      // Any number of whole segments: "a/**/b" matches "a/b" and "a/x/y/b"; a trailing "**" anything.
      out += last ? '.*' : '(?:[^/]*/)*';
      return;
    }
    out += compileSegment(segment) + (last ? '' : '/');
  });
  return out;
}

function compileSegment(segment: string): string {
  let out = '';
  const chars = Array.from(segment);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === '\\' && i + 1 < chars.length) {
      out += escapeRegex(chars[++i]);
    } else if (c === '*') {
      while (chars[i + 1] === '*') i++;
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const parsed = compileClass(chars, i);
      if (parsed) {
        out += parsed.regex;
        i = parsed.end;
      } else {
        out += '\\[';
      }
    } else {
      out += escapeRegex(c);
    }
  }
  return out;
}

/** `[...]` starting at chars[start], or null when it is not closed (then `[` is a literal). */
function compileClass(chars: string[], start: number): { regex: string; end: number } | null {
  let i = start + 1;
  let negate = false;
  if (chars[i] === '!' || chars[i] === '^') {
    negate = true;
    i++;
  }
  let body = '';
  for (let first = true; i < chars.length; first = false, i++) {
    const c = chars[i];
    if (c === ']' && !first) {
      return { regex: negate ? `[^/${body}]` : `[${body}]`, end: i };
    }
    if (c === '\\' && i + 1 < chars.length) {
      body += escapeClass(chars[++i]);
    } else if (c === '-' && !first && chars[i + 1] !== undefined && chars[i + 1] !== ']') {
      body += '-';
    } else {
      body += escapeClass(c);
    }
  }
  return null;
}

function escapeRegex(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

function escapeClass(c: string): string {
  return /[\\\]^[-]/.test(c) ? `\\${c}` : c;
}
