/** File names that break naive listings and reports (each valid in a file name and an S3 key). */
export const HARD_NAMES = [
  'plain.txt',
  'with space',
  ' leading space',
  'trailing space ',
  '*star',
  'back\\slash',
  'new\nline',
  'cr\rname',
  'tab\tname',
  'paren) (x) = y',
  'été 日本 😀',
  'sub dir/deeper/file',
];
