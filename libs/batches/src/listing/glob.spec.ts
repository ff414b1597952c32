import { Glob, GlobError } from './glob';

describe('Glob', () => {
  const cases: Array<[string, string, boolean]> = [
    ['*.txt', 'a.txt', true],
    ['*.txt', 'deep/down/a.txt', true], // no slash: the file's own name, at any depth
    ['*.txt', 'a.txt.bak', false],
    ['*.txt', 'dir.txt/a.bin', false],
    ['?.bin', 'x.bin', true],
    ['?.bin', 'xy.bin', false],
    ['data/*.csv', 'data/a.csv', true],
    ['data/*.csv', 'data/sub/a.csv', false],
    ['data/**/*.csv', 'data/a.csv', true],
    ['data/**/*.csv', 'data/x/y/z.csv', true],
    ['data/**/*.csv', 'other/data/a.csv', false],
    ['**/*.csv', 'a.csv', true],
    ['**/*.csv', 'p/q/a.csv', true],
    ['data/**', 'data/x/y', true],
    ['data/**', 'database/x', false],
    ['[ab]*.log', 'a1.log', true],
    ['[ab]*.log', 'c1.log', false],
    ['[a-c]?', 'b9', true],
    ['[!a-c]?', 'b9', false],
    ['[^a-c]?', 'z9', true],
    ['[]]x', ']x', true],
    ['\\*.txt', '*.txt', true],
    ['\\*.txt', 'a.txt', false],
    ['a+b(1).txt', 'a+b(1).txt', true],
    ['[unclosed', '[unclosed', true],
    ['*', 'line\nbreak', true],
    ['é*', 'été', true],
    ['?', '😀', true],
    ['x/?', 'x//', false],
  ];
  it.each(cases)('%j matches %j: %s', (pattern, path, expected) => {
    expect(new Glob(pattern).matches(path)).toBe(expected);
  });

  it('refuses an empty pattern', () => {
    expect(() => new Glob('')).toThrow(GlobError);
  });
});
