/**
 * File names in coreutils' checksum lines (md5sum/sha*sum/cksum, coreutils 9): a name holding a
 * backslash, a newline or a carriage return is written escaped (`\\`, `\n`, `\r`) and its whole
 * line starts with a backslash; any other name is written as it is.
 */
export function needsEscape(name: string): boolean {
  return /[\\\n\r]/.test(name);
}

export function escapeName(name: string): string {
  return name.replace(/[\\\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : '\\r'));
}

/**
 * The name of an escaped line, or null when it is not valid there (as coreutils' filename_unescape:
 * only `\\`, `\n` and `\r` may follow a backslash, a lone backslash may not end it, no NUL).
 */
export function unescapeName(escaped: string): string | null {
  let out = '';
  for (let i = 0; i < escaped.length; i++) {
    const c = escaped[i];
    if (c === '\0') return null;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = escaped[++i];
    if (next === '\\') out += '\\';
    else if (next === 'n') out += '\n';
    else if (next === 'r') out += '\r';
    else return null;
  }
  return out;
}
