'use strict';
/**
 * Turns the eBASH page (bench/data/ebash-nistlwc-riscv64-u54.txt, the text
 * of eBASH's NISTLWC finalists page for a SiFive U54, supercop-20240107,
 * page version 20240726) into bench/data/ebash-u54.json: per message
 * length, each primitive's 25 %, 50 % (median), 75 % cycles/byte.
 * Usage: node ebash.js [page.txt] [out.json]
 */
const fs = require('node:fs');
const path = require('node:path');

const data = path.join(__dirname, '..', 'data');
const [
  page = path.join(data, 'ebash-nistlwc-riscv64-u54.txt'),
  out = path.join(data, 'ebash-u54.json'),
] = process.argv.slice(2);
const text = fs.readFileSync(page, 'utf8');
const machine = /Measurements of NISTLWC hash candidates on one machine: (.*)/.exec(text)[1].trim();
const version = /\[Page version: ([^\]]+)\]/.exec(text)[1];
const tables = {};
// "Cycles/byte for <len> 25% 50% 75% hash q1 q2 q3 name q1 q2 q3 name ..."
for (const m of text.matchAll(
  /^Cycles\/byte for (long messages|\d+ bytes) 25% 50% 75% hash (.*)$/gm,
)) {
  const key = m[1] === 'long messages' ? 'long' : m[1].split(' ')[0];
  const tokens = m[2].trim().split(/\s+/);
  if (tokens.length % 4 !== 0) throw new Error(`table ${key}: ${tokens.length} tokens`);
  const rows = {};
  for (let i = 0; i < tokens.length; i += 4) {
    const [q1, q2, q3] = tokens.slice(i, i + 3).map((x) => Number(x.replace('?', '')));
    const name = tokens[i + 3].replace(/^T:/, '');
    rows[name] = { q1, median: q2, q3, highVariance: tokens[i + 1].endsWith('?') };
  }
  tables[key] = rows;
}
const doc = {
  source:
    'eBASH (eBACS, ECRYPT Benchmarking of All Submitted Hashes), NISTLWC finalists page, ' +
    `page version ${version}; derived from libs/native/bench/data/${path.basename(page)}`,
  machine,
  unit: 'cycles/byte (quartiles of many measurements)',
  tables,
};
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify(doc, null, 1) + '\n');
console.log(`wrote ${out}: ${Object.keys(tables).join(', ')}`);
