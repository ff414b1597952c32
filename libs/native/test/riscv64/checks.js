'use strict';
/**
 * The checks the riscv64 runner performs through the package's JS API:
 * KAT files, resumability properties, and the cross-architecture state
 * files (written on one architecture, finished on the other).
 */
const fs = require('node:fs');
const path = require('node:path');
const { prng } = require('./prng');

const root = path.resolve(__dirname, '..', '..');
const lib = require(path.join(root, 'dist', 'index.js'));
const kat = require('./dist/kat.js');

/** Records each check; the first few failures are printed. */
class Tally {
  constructor() {
    this.passed = 0;
    this.failed = 0;
  }
  check(ok, label) {
    if (ok) this.passed++;
    else if (this.failed++ < 20) console.error(`FAIL ${label}`);
  }
}

/** Options that exercise the parameters a state carries: CXOF
 * customization and a non-default XOF output length. */
function optionsFor(info, rnd) {
  const o = {};
  if (info.customizable) o.customization = rnd.bytes(rnd.below(40));
  if (info.xof) o.outputLength = 1 + rnd.below(200);
  return o;
}

const oneShot = (name, msg, outLen, custom) =>
  lib.hash(name, msg, { length: outLen, customization: custom });

/** Serialize after the first third, restore without naming the algorithm,
 * continue: the streamed form of one vector. */
const streamed = (name, msg, outLen, custom) => {
  const a = Math.floor(msg.length / 3);
  const h = lib.createHasher(name, { customization: custom });
  h.update(msg.subarray(0, a));
  const r = lib.Hasher.restore(h.serialize());
  return r.update(msg.subarray(a)).digest({ length: outLen });
};

/**
 * Every KAT file of a linked algorithm. LWC/CAVP files: every vector
 * one-shot, and every `every`-th one (and the last) also streamed through
 * serialize/restore; Monte files run whole (they are chains of one-shots).
 * `paths` (a set of implementation names), when given, keeps the files of
 * the algorithms dispatched to one of those paths.
 */
function runKats(dir, every, t, paths) {
  if (paths) {
    // each path asked for must be dispatched here, or nothing would run on it
    const here = new Set(lib.algorithms().map((a) => lib.implementation(a.name)));
    for (const p of paths) {
      t.check(
        here.has(p),
        `no algorithm on the ${p} path (CPU features: ${lib.cpuFeatures().detected})`,
      );
    }
  }
  for (const file of kat.listKatFiles(dir)) {
    if (!lib.findAlgorithm(file.algorithm)) {
      t.check(false, `${file.file}: algorithm ${file.algorithm} not linked`);
      continue;
    }
    if (paths && !paths.has(lib.implementation(file.algorithm))) continue;
    const before = t.passed + t.failed;
    if (file.kind.startsWith('monte')) {
      const r = kat.checkKatFile(file, oneShot, dir);
      for (let i = 0; i < r.checked; i++) t.check(!r.failures[i], r.failures[i]);
    } else {
      const text = kat.readKatFile(file.file, dir);
      const vectors = kat.vectorsOf(file, text);
      vectors.forEach((v, i) => {
        t.check(
          oneShot(file.algorithm, v.msg, v.outLen, v.custom).equals(v.expected),
          `${v.label} one-shot`,
        );
        if (i % every !== 0 && i !== vectors.length - 1) return;
        t.check(
          streamed(file.algorithm, v.msg, v.outLen, v.custom).equals(v.expected),
          `${v.label} streamed`,
        );
      });
    }
    console.log(
      `  ${file.algorithm.padEnd(20)} ${String(t.passed + t.failed - before).padStart(6)} checks  ${file.file}`,
    );
  }
}

/**
 * Resumability: random messages, random split points; at each split the
 * state is serialized and restored into a fresh Hasher (alternately with and
 * without naming the algorithm, and through copy()); the result must equal
 * the one-shot digest. Short messages: every split point.
 */
function runProperties(seed, cases, t) {
  const rnd = prng(seed);
  for (const info of lib.algorithms()) {
    for (let c = 0; c < cases; c++) {
      const opts = optionsFor(info, rnd);
      const msg = rnd.bytes(rnd.below(c === 0 ? 3 * info.blockSize + 2 : 4096));
      const want = lib.hash(info.name, msg, { ...opts, length: opts.outputLength });
      let h = lib.createHasher(info.name, opts);
      let at = 0;
      while (at < msg.length) {
        const step = 1 + rnd.below(Math.min(msg.length - at, 2 * info.blockSize + 3));
        h.update(msg.subarray(at, at + step));
        at += step;
        const state = h.serialize();
        h =
          rnd.below(3) === 0
            ? lib.Hasher.restore(state).copy()
            : lib.Hasher.restore(state, info.name);
      }
      t.check(
        h.bytesHashed === msg.length && h.digest().equals(want),
        `${info.name} seed ${seed} case ${c} (len ${msg.length})`,
      );
    }
    // every split point of a message a little over two blocks long
    const opts = optionsFor(info, rnd);
    const msg = rnd.bytes(2 * info.blockSize + 1);
    const want = lib.hash(info.name, msg, { ...opts, length: opts.outputLength });
    for (let s = 0; s <= msg.length; s++) {
      const h = lib.createHasher(info.name, opts).update(msg.subarray(0, s));
      const r = lib.Hasher.restore(h.serialize(), info.name).update(msg.subarray(s));
      t.check(r.digest().equals(want), `${info.name} every-split ${s}/${msg.length}`);
    }
  }
}

/** The split points of a cross-architecture state file: block edges and
 * random points. */
function splitPoints(len, block, rnd) {
  const s = new Set([0, 1, len, len - 1]);
  for (let b = block; b <= len; b += block) [b - 1, b, b + 1].forEach((x) => s.add(x));
  for (let i = 0; i < 8; i++) s.add(rnd.below(len + 1));
  return [...s].filter((x) => x >= 0 && x <= len).sort((a, b) => a - b);
}

/** States at many split points of one message per algorithm, each with the
 * writer's one-shot digest. */
function writeStates(file, seed) {
  const rnd = prng(seed);
  const entries = [];
  for (const info of lib.algorithms()) {
    const opts = optionsFor(info, rnd);
    const msg = rnd.bytes(4 * info.blockSize + 5 + rnd.below(info.blockSize));
    const digest = lib.hash(info.name, msg, { ...opts, length: opts.outputLength });
    for (const split of splitPoints(msg.length, info.blockSize, rnd)) {
      const state = lib.createHasher(info.name, opts).update(msg.subarray(0, split)).serialize();
      entries.push({
        algorithm: info.name,
        customization: opts.customization?.toString('hex'),
        outputLength: opts.outputLength,
        msg: msg.toString('hex'),
        split,
        state: state.toString('hex'),
        digest: digest.toString('hex'),
      });
    }
  }
  const doc = { arch: process.arch, paths: pathsHere(), node: process.version, seed, entries };
  fs.writeFileSync(file, JSON.stringify(doc));
  console.log(`wrote ${entries.length} states (${process.arch}, seed ${seed}) to ${file}`);
}

/** The code path of every algorithm here, e.g. "sha256:zknh,…". */
const pathsHere = () =>
  lib
    .algorithms()
    .map((a) => `${a.name}:${lib.implementation(a.name)}`)
    .join(',');

/** Restores each state written on another architecture (or on other code
 * paths of this one) and finishes it: the digest must equal the writer's
 * and this machine's one-shot; a state written here at the same point must
 * be the same bytes. */
function checkStates(file, t) {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (doc.arch === process.arch && doc.paths === pathsHere()) {
    throw new Error(
      `${file} was written on this architecture (${doc.arch}) by the same code paths`,
    );
  }
  if (doc.entries.length === 0) throw new Error(`${file} holds no states`);
  const algos = new Set();
  for (const e of doc.entries) {
    const label = `${e.algorithm} split ${e.split} (written on ${doc.arch})`;
    if (!lib.findAlgorithm(e.algorithm)) {
      t.check(false, `${label}: not linked here`);
      continue;
    }
    algos.add(e.algorithm);
    const msg = Buffer.from(e.msg, 'hex');
    const opts = {};
    if (e.customization !== undefined) opts.customization = Buffer.from(e.customization, 'hex');
    if (e.outputLength !== undefined) opts.outputLength = e.outputLength;
    const want = Buffer.from(e.digest, 'hex');
    let finished;
    try {
      finished = lib.Hasher.restore(Buffer.from(e.state, 'hex'), e.algorithm)
        .update(msg.subarray(e.split))
        .digest();
    } catch (err) {
      finished = Buffer.from(`${err.code ?? err.message}`);
    }
    t.check(
      finished.equals(want),
      `${label}: finished digest (${finished.length === want.length ? 'differs' : finished})`,
    );
    t.check(
      lib.hash(e.algorithm, msg, { ...opts, length: opts.outputLength }).equals(want),
      `${label}: one-shot here`,
    );
    const mine = lib.createHasher(e.algorithm, opts).update(msg.subarray(0, e.split)).serialize();
    t.check(mine.toString('hex') === e.state, `${label}: same state bytes`);
  }
  const missing = lib.algorithms().filter((a) => !algos.has(a.name));
  t.check(
    missing.length === 0,
    `algorithms without a cross-architecture state: ${missing.map((a) => a.name).join(' ')}`,
  );
  console.log(
    `  ${doc.entries.length} states of ${algos.size} algorithms from ${doc.arch} (${doc.node})`,
  );
}

module.exports = { lib, Tally, runKats, runProperties, writeStates, checkStates };
