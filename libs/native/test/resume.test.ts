/**
 * Resumability: serialize → restore in a fresh Hasher (here, or in another
 * process, or on the other implementation path) → continue must equal the
 * one-shot digest. Oracle: Node's crypto where it has the algorithm, else
 * the library's one-shot (checked against the official vectors).
 */
import * as lib from '../lib';
import { oracle, prng, TEST_SEED } from './helpers/oracle';
import { ImplPath, runChild } from './helpers/spawn';

const infos = lib.algorithms();
const rnd = prng(TEST_SEED);
const seedNote = `HASHQ_TEST_SEED=${TEST_SEED}`;

/** Options that exercise every state field: XOF length, customization. */
function optionsFor(info: lib.AlgorithmInfo): lib.HasherOptions {
  return {
    outputLength: info.xof ? info.digestLength + 13 : undefined,
    customization: info.customizable ? Buffer.from('hashq customization') : undefined,
  };
}

function expected(info: lib.AlgorithmInfo, msg: Buffer): Buffer {
  const opts = optionsFor(info);
  const viaOracle = opts.customization ? undefined : oracle(info.name, msg, opts.outputLength);
  return viaOracle ?? lib.hash(info.name, msg, { ...opts, length: opts.outputLength });
}

function resumeAt(info: lib.AlgorithmInfo, msg: Buffer, split: number): Buffer {
  const h = lib.createHasher(info.name, optionsFor(info));
  h.update(msg.subarray(0, split));
  const state = h.serialize();
  const fresh = lib.Hasher.restore(Buffer.from(state));
  expect(fresh.algorithm).toBe(info.name);
  expect(fresh.bytesHashed).toBe(split);
  return fresh.update(msg.subarray(split)).digest();
}

describe.each(infos.map((i) => [i.name, i] as const))('%s', (_name, info) => {
  test('every split point of a message of 2 blocks + 3 bytes', () => {
    const msg = rnd.bytes(2 * info.blockSize + 3);
    const want = expected(info, msg).toString('hex');
    for (let split = 0; split <= msg.length; split++) {
      expect([split, resumeAt(info, msg, split).toString('hex')]).toEqual([split, want]);
    }
  });

  test(`random messages up to 64 KiB, random split points (${seedNote})`, () => {
    for (let i = 0; i < 8; i++) {
      const msg = rnd.bytes(rnd.int(64 * 1024 + 1));
      const want = expected(info, msg).toString('hex');
      // several splits in a row: resume, update, serialize again, resume…
      const cuts = [0, rnd.int(msg.length + 1), rnd.int(msg.length + 1), msg.length].sort(
        (a, b) => a - b,
      );
      let h = lib.createHasher(info.name, optionsFor(info));
      for (let c = 1; c < cuts.length; c++) {
        h.update(msg.subarray(cuts[c - 1], cuts[c]));
        h = lib.Hasher.restore(h.serialize(), info.name);
      }
      expect([msg.length, cuts, h.digest().toString('hex')]).toEqual([msg.length, cuts, want]);
    }
  });
});

interface Case {
  info: lib.AlgorithmInfo;
  msg: Buffer;
  split: number;
}

function cases(): Case[] {
  const out: Case[] = [];
  for (const info of infos) {
    for (let i = 0; i < 4; i++) {
      const msg = rnd.bytes(i === 0 ? 3 * info.blockSize + 1 : rnd.int(8192));
      out.push({ info, msg, split: rnd.int(msg.length + 1) });
    }
  }
  return out;
}

describe('across processes and implementation paths', () => {
  const paths: [ImplPath, ImplPath][] = [
    ['dispatched', 'dispatched'],
    ['dispatched', 'portable'],
    ['portable', 'dispatched'],
    ['portable', 'portable'],
  ];

  test.each(paths)(
    `state written on the %s path resumes on the %s path (${seedNote})`,
    (from, to) => {
      const list = cases();
      const serializeJobs = list.map((c) => {
        const o = optionsFor(c.info);
        return {
          algorithm: c.info.name,
          message: c.msg.subarray(0, c.split).toString('hex'),
          options: {
            outputLength: o.outputLength,
            customization: (o.customization as Buffer | undefined)?.toString('hex'),
          },
        };
      });
      // "dispatched" here means this jest process when it is not forced portable.
      const states =
        from === 'dispatched' && process.env.HASHQ_NATIVE_IMPL !== 'portable'
          ? list.map((c) =>
              lib
                .createHasher(c.info.name, optionsFor(c.info))
                .update(c.msg.subarray(0, c.split))
                .serialize()
                .toString('hex'),
            )
          : runChild<string[]>('serialize', serializeJobs, from);
      const resumed = runChild<string[]>(
        'resume',
        list.map((c, i) => ({ state: states[i], rest: c.msg.subarray(c.split).toString('hex') })),
        to,
      );
      list.forEach((c, i) => {
        expect([c.info.name, c.msg.length, c.split, resumed[i]]).toEqual([
          c.info.name,
          c.msg.length,
          c.split,
          expected(c.info, c.msg).toString('hex'),
        ]);
      });
    },
  );

  test('the same message serializes to the same bytes on both paths', () => {
    const list = cases();
    const jobs = list.map((c) => {
      const o = optionsFor(c.info);
      return {
        algorithm: c.info.name,
        message: c.msg.subarray(0, c.split).toString('hex'),
        options: {
          outputLength: o.outputLength,
          customization: (o.customization as Buffer | undefined)?.toString('hex'),
        },
      };
    });
    expect(runChild<string[]>('serialize', jobs, 'portable')).toEqual(
      runChild<string[]>('serialize', jobs, 'dispatched'),
    );
  });
});
