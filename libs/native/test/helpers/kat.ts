/**
 * Parsers and checkers for the official test-vector files in test/vectors
 * (gzip-compressed copies; formats described in its README.md): NIST LWC (`Count/Msg/[Z]/MD`),
 * NIST CAVP byte-oriented .rsp (Short/LongMsg, SHAKE VariableOut) and the
 * three Monte Carlo procedures (SHAVS, SHA3VS for SHA3-256, SHA3VS SHAKE).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';

/** libs/native/test/vectors: each file stored as <name>.gz. */
export const KAT_DIR = path.resolve(__dirname, '..', 'vectors');

export type KatKind = 'lwc' | 'cavp' | 'monte-sha2' | 'monte-sha3' | 'monte-shake';

export interface KatFile {
  /** path relative to KAT_DIR, as published (the stored file adds .gz) */
  file: string;
  algorithm: string;
  kind: KatKind;
}

/** Computes `outLen` bytes of `algorithm` over msg (with customization). */
export type HashFn = (algorithm: string, msg: Buffer, outLen: number, custom?: Buffer) => Buffer;

/** The algorithm of each vector file, by its path. */
const LWC_ALGORITHMS: Record<string, string> = {
  'ascon/sp800-232/asconhash256': 'ascon-hash256',
  'ascon/sp800-232/asconxof128': 'ascon-xof128',
  'ascon/sp800-232/asconcxof128': 'ascon-cxof128',
  'ascon/v1.2/asconhashv12': 'asconhashv12',
  'ascon/v1.2/asconhashav12': 'asconhashav12',
  'ascon/v1.2/asconxofv12': 'asconxofv12',
  'ascon/v1.2/asconxofav12': 'asconxofav12',
  'esch/esch256v2': 'esch256',
  'esch/esch384v2': 'esch384',
  'photon-beetle-hash/photonbeetlehash256rate32v1': 'photonbeetlehash256',
  'romulus-h/romulush': 'romulush',
  'sha2/lwc-format-sha256': 'sha256',
  'xoodyak/xoodyakround3': 'xoodyak',
};

const RSP_ALGORITHMS: Record<string, string> = {
  SHA1: 'sha1',
  SHA256: 'sha256',
  SHA512: 'sha512',
  SHA3_256: 'sha3-256',
  SHAKE128: 'shake128',
  SHAKE256: 'shake256',
};

function classify(file: string): KatFile {
  const dir = path.posix.dirname(file);
  const base = path.posix.basename(file);
  if (base.startsWith('LWC_')) {
    const algorithm = LWC_ALGORITHMS[dir];
    if (!algorithm) throw new Error(`KAT file of unknown algorithm: ${file}`);
    return { file, algorithm, kind: 'lwc' };
  }
  const m =
    /^(SHA1|SHA256|SHA512|SHA3_256|SHAKE128|SHAKE256)(ShortMsg|LongMsg|VariableOut|Monte)\.rsp$/.exec(
      base,
    );
  if (!m) throw new Error(`KAT file of unknown kind: ${file}`);
  const algorithm = RSP_ALGORITHMS[m[1]];
  if (m[2] !== 'Monte') return { file, algorithm, kind: 'cavp' };
  const kind = m[1].startsWith('SHAKE')
    ? 'monte-shake'
    : m[1] === 'SHA3_256'
      ? 'monte-sha3'
      : 'monte-sha2';
  return { file, algorithm, kind };
}

/** Every vector file under KAT_DIR (README, checksums, dotfiles and the unused BLAKE3 JSON excluded). */
export function listKatFiles(dir = KAT_DIR): KatFile[] {
  const out: KatFile[] = [];
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.name.startsWith('.')) continue;
      if (e.isDirectory()) walk(r);
      else if (/\.(txt|rsp)\.gz$/.test(e.name)) out.push(classify(r.slice(0, -'.gz'.length)));
    }
  };
  walk('');
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

export interface KatRecord {
  /** the `[Name = value]` parameters in force, e.g. { L: '32' } */
  params: Record<string, string>;
  /** the `Name = value` lines of the record */
  fields: Record<string, string>;
  line: number;
}

/** Splits a vector file into records (blocks separated by empty lines).
 * Handles CRLF and LF; `#` lines are comments. */
export function parseRecords(text: string): KatRecord[] {
  const records: KatRecord[] = [];
  let params: Record<string, string> = {};
  let fields: Record<string, string> | null = null;
  let start = 0;
  const lines = text.split(/\r?\n/);
  const flush = (): void => {
    if (fields) records.push({ params: { ...params }, fields, line: start });
    fields = null;
  };
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return flush();
    if (line.startsWith('#')) return;
    const p = /^\[(.+?)(?:\s*=\s*(.*))?\]$/.exec(line);
    if (p) {
      flush();
      params = { ...params, [p[1]]: p[2] ?? '' };
      return;
    }
    const f = /^([A-Za-z]+)\s*=\s*(.*)$/.exec(line);
    if (!f) throw new Error(`line ${i + 1}: cannot parse "${line}"`);
    if (!fields) {
      fields = {};
      start = i + 1;
    }
    fields[f[1]] = f[2];
  });
  flush();
  return records;
}

export interface KatVector {
  label: string;
  msg: Buffer;
  custom?: Buffer;
  outLen: number;
  expected: Buffer;
}

const hex = (s: string | undefined): Buffer => Buffer.from((s ?? '').trim(), 'hex');

/** LWC and CAVP Short/Long/VariableOut files → plain vectors. */
export function vectorsOf(kat: KatFile, text: string): KatVector[] {
  const out: KatVector[] = [];
  for (const r of parseRecords(text)) {
    const f = r.fields;
    if (kat.kind === 'lwc') {
      if (f.Count === undefined) continue;
      const expected = hex(f.MD);
      out.push({
        label: `${kat.file}:${r.line} Count=${f.Count}`,
        msg: hex(f.Msg),
        custom: f.Z === undefined ? undefined : hex(f.Z),
        outLen: expected.length,
        expected,
      });
      continue;
    }
    if (f.Msg === undefined) continue; // e.g. the header block
    const expected = hex(f.MD ?? f.Output);
    if (f.Len !== undefined && Number(f.Len) % 8 !== 0)
      throw new Error(`${kat.file}:${r.line}: bit length`);
    // Len is in bits; "Msg = 00" stands for the empty message when Len = 0.
    const msg = f.Len === '0' ? Buffer.alloc(0) : hex(f.Msg);
    if (f.Len !== undefined && msg.length * 8 !== Number(f.Len))
      throw new Error(`${kat.file}:${r.line}: Len`);
    const outLen = f.Outputlen !== undefined ? Number(f.Outputlen) / 8 : expected.length;
    out.push({ label: `${kat.file}:${r.line}`, msg, outLen, expected });
  }
  return out;
}

/** The published text of a vector file (decompressed). */
export function readKatFile(file: string, dir = KAT_DIR): string {
  return zlib.gunzipSync(fs.readFileSync(path.join(dir, `${file}.gz`))).toString('latin1');
}

/** Checks one file; returns the labels of failing vectors (empty = pass)
 * and the number of vectors checked. */
export function checkKatFile(
  kat: KatFile,
  h: HashFn,
  dir = KAT_DIR,
): { checked: number; failures: string[] } {
  const text = readKatFile(kat.file, dir);
  switch (kat.kind) {
    case 'lwc':
    case 'cavp': {
      const failures: string[] = [];
      const vectors = vectorsOf(kat, text);
      for (const v of vectors) {
        const got = h(kat.algorithm, v.msg, v.outLen, v.custom);
        if (!got.equals(v.expected)) failures.push(`${v.label}: got ${got.toString('hex')}`);
      }
      return { checked: vectors.length, failures };
    }
    case 'monte-sha2':
      return monteSha2(kat, text, h);
    case 'monte-sha3':
      return monteSha3(kat, text, h);
    case 'monte-shake':
      return monteShake(kat, text, h);
  }
}

function seedOf(records: KatRecord[], name: string): Buffer {
  const r = records.find((x) => x.fields[name] !== undefined);
  if (!r) throw new Error(`no ${name} in Monte file`);
  return hex(r.fields[name]);
}

function checkpoints(records: KatRecord[]): KatRecord[] {
  const cps = records.filter((r) => r.fields.COUNT !== undefined);
  if (cps.length !== 100) throw new Error(`expected 100 Monte checkpoints, found ${cps.length}`);
  return cps;
}

/** SHAVS: MD0 = MD1 = MD2 = Seed; MD_i = H(MD_{i-3} ‖ MD_{i-2} ‖ MD_{i-1}). */
function monteSha2(kat: KatFile, text: string, h: HashFn): { checked: number; failures: string[] } {
  const records = parseRecords(text);
  let seed = seedOf(records, 'Seed');
  const failures: string[] = [];
  for (const cp of checkpoints(records)) {
    let md = [seed, seed, seed];
    for (let i = 3; i < 1003; i++) {
      const next = h(kat.algorithm, Buffer.concat(md), seed.length);
      md = [md[1], md[2], next];
    }
    seed = md[2];
    if (!seed.equals(hex(cp.fields.MD))) failures.push(`${kat.file} COUNT=${cp.fields.COUNT}`);
  }
  return { checked: 100, failures };
}

/** SHA3VS: MD = SHA3(MD) 1000 times per checkpoint. */
function monteSha3(kat: KatFile, text: string, h: HashFn): { checked: number; failures: string[] } {
  const records = parseRecords(text);
  let md = seedOf(records, 'Seed');
  const failures: string[] = [];
  for (const cp of checkpoints(records)) {
    for (let i = 0; i < 1000; i++) md = h(kat.algorithm, md, md.length);
    if (!md.equals(hex(cp.fields.MD))) failures.push(`${kat.file} COUNT=${cp.fields.COUNT}`);
  }
  return { checked: 100, failures };
}

/** SHA3VS SHAKE: M = first 16 bytes of the previous output (zero-padded);
 * the next output length comes from its last two bytes. */
function monteShake(
  kat: KatFile,
  text: string,
  h: HashFn,
): { checked: number; failures: string[] } {
  const records = parseRecords(text);
  const first = records[0].params;
  const minBytes = Number(first['Minimum Output Length (bits)']) / 8;
  const maxBytes = Number(first['Maximum Output Length (bits)']) / 8;
  if (!(minBytes > 0 && maxBytes >= minBytes)) throw new Error(`${kat.file}: output length range`);
  const range = maxBytes - minBytes + 1;
  let out = seedOf(records, 'Msg');
  let outLen = maxBytes;
  const failures: string[] = [];
  for (const cp of checkpoints(records)) {
    let used = outLen;
    for (let i = 0; i < 1000; i++) {
      const m = Buffer.alloc(16);
      out.copy(m, 0, 0, Math.min(16, out.length));
      used = outLen;
      out = h(kat.algorithm, m, outLen);
      outLen = minBytes + (out.readUInt16BE(out.length - 2) % range);
    }
    if (!out.equals(hex(cp.fields.Output)) || used * 8 !== Number(cp.fields.Outputlen)) {
      failures.push(`${kat.file} COUNT=${cp.fields.COUNT}`);
    }
  }
  return { checked: 100, failures };
}
