import { createDecipheriv, randomBytes } from 'node:crypto';

import { createHasher } from '@hashq/native';

import {
  jobStateBinding,
  readSealedHeader,
  SealedStateError,
  type StateBinding,
  StateSealer,
} from './state-sealer';

const A = { id: 'a', key: randomBytes(32) };
const B = { id: 'key-b_2', key: randomBytes(32) };
const JOB = '3f1d6f4e-8a51-4c55-9a3e-1b2c3d4e5f60';
const BINDING = jobStateBinding(JOB, 'sha256', 64 * 1024 * 1024, 7);

/** A real serialized state (with its plaintext tail) as the worker stores it. */
function sampleState(): Buffer {
  const hasher = createHasher('sha256');
  hasher.update(Buffer.from('the input bytes: they must never be stored in the clear. '.repeat(3)));
  return Buffer.from(hasher.serialize());
}

function refusal(run: () => unknown): SealedStateError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(SealedStateError);
    expect((err as SealedStateError).code).toBe('STATE_INVALID');
    return err as SealedStateError;
  }
  throw new Error('expected a SealedStateError');
}

describe('StateSealer', () => {
  const state = sampleState();

  it('round-trips a state; the sealed bytes do not contain it and differ every time (random nonce)', () => {
    const sealer = new StateSealer([A]);
    const first = sealer.seal(state, BINDING);
    const second = sealer.seal(state, BINDING);
    expect(sealer.open(first, BINDING)).toEqual(state);
    expect(sealer.open(second, BINDING)).toEqual(state);
    expect(first.equals(second)).toBe(false);
    expect(first.includes(state.subarray(24, 40))).toBe(false); // the plaintext tail
    expect(first.length).toBe(state.length + 4 + 1 + 1 + A.id.length + 12 + 16);
  });

  it('never repeats a nonce, across many refills of its random block and between sealers', () => {
    const sealers = [new StateSealer([A]), new StateSealer([B])];
    const seen = new Set<string>();
    const count = 1500; // several blocks of pooled nonces
    for (let i = 0; i < count; i++) {
      const sealer = sealers[i % 2];
      const binding = { ...BINDING, offset: i };
      const sealed = sealer.seal(state, binding);
      seen.add(readSealedHeader(sealed).nonce.toString('hex'));
      expect(sealer.open(sealed, binding)).toEqual(state);
    }
    expect(seen.size).toBe(count);
  });

  it('writes the documented layout: Node crypto alone opens it (header || binding as associated data)', () => {
    const sealed = new StateSealer([B]).seal(state, BINDING);
    expect(sealed.subarray(0, 4).toString('latin1')).toBe('HQse');
    expect(sealed[4]).toBe(1);
    expect(sealed[5]).toBe(B.id.length);
    const idEnd = 6 + B.id.length;
    expect(sealed.subarray(6, idEnd).toString('latin1')).toBe(B.id);
    const nonce = sealed.subarray(idEnd, idEnd + 12);
    expect(readSealedHeader(sealed)).toEqual({
      version: 1,
      keyId: B.id,
      nonce: Buffer.from(nonce),
    });

    const text = (value: string) => {
      const bytes = Buffer.from(value);
      return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
    };
    const u64 = (value: number) => {
      const bytes = Buffer.alloc(8);
      bytes.writeBigUInt64BE(BigInt(value));
      return bytes;
    };
    const ad = Buffer.concat([
      sealed.subarray(0, idEnd + 12),
      text('job'),
      text(JOB),
      text('sha256'),
      u64(BINDING.offset),
      u64(BINDING.fence),
    ]);
    const decipher = createDecipheriv('aes-256-gcm', B.key, nonce);
    decipher.setAAD(ad);
    decipher.setAuthTag(sealed.subarray(-16));
    expect(
      Buffer.concat([decipher.update(sealed.subarray(idEnd + 12, -16)), decipher.final()]),
    ).toEqual(state);
  });

  it('refuses the state under any other value of each binding field', () => {
    const sealer = new StateSealer([A]);
    const sealed = sealer.seal(state, BINDING);
    const others: StateBinding[] = [
      { ...BINDING, purpose: 'session' },
      { ...BINDING, ownerId: '3f1d6f4e-8a51-4c55-9a3e-1b2c3d4e5f61' },
      { ...BINDING, algorithm: 'sha512' },
      { ...BINDING, offset: BINDING.offset - 1 },
      { ...BINDING, offset: BINDING.offset + 2 ** 32 },
      { ...BINDING, fence: 6 },
      { ...BINDING, fence: 8 },
      // fields that run into each other when concatenated without lengths
      { ...BINDING, ownerId: `${JOB}s`, algorithm: 'ha256' },
    ];
    for (const other of others) {
      expect(refusal(() => sealer.open(sealed, other)).message).toMatch(
        /does not authenticate with key "a"/,
      );
    }
    expect(sealer.open(sealed, { ...BINDING })).toEqual(state);
  });

  it('refuses a state with any single byte changed, the header included', () => {
    const sealer = new StateSealer([A]);
    const sealed = sealer.seal(state, BINDING);
    for (let at = 0; at < sealed.length; at++) {
      const altered = Buffer.from(sealed);
      altered[at] ^= 0x01;
      refusal(() => sealer.open(altered, BINDING));
    }
  });

  it('refuses truncated and extended states, and plaintext states', () => {
    const sealer = new StateSealer([A]);
    const sealed = sealer.seal(state, BINDING);
    for (let length = 0; length < sealed.length; length++) {
      refusal(() => sealer.open(sealed.subarray(0, length), BINDING));
    }
    refusal(() => sealer.open(Buffer.concat([sealed, Buffer.from([0])]), BINDING));
    expect(refusal(() => sealer.open(state, BINDING)).message).toMatch(/not a sealed state/);
    const tooNew = Buffer.from(sealed);
    tooNew[4] = 2;
    expect(refusal(() => sealer.open(tooNew, BINDING)).message).toMatch(
      /unknown sealed-state version 2/,
    );
  });

  it('names the key id of a state sealed with a key it does not hold; a wrong key of the same id fails', () => {
    const sealed = new StateSealer([A]).seal(state, BINDING);
    const error = refusal(() => new StateSealer([B]).open(sealed, BINDING));
    expect(error.keyId).toBe('a');
    expect(error.message).toBe(
      `state sealed with key "a", which HASHQ_STATE_KEYS does not list (it has "${B.id}")`,
    );
    const impostor = { id: 'a', key: randomBytes(32) };
    expect(refusal(() => new StateSealer([impostor]).open(sealed, BINDING)).message).toMatch(
      /does not authenticate/,
    );
  });

  it('rotates: the first key seals, every key opens', () => {
    const old = new StateSealer([A]).seal(state, BINDING);
    const rotated = new StateSealer([B, A]);
    expect(rotated.writeKeyId).toBe(B.id);
    expect(rotated.open(old, BINDING)).toEqual(state);
    const fresh = rotated.seal(state, BINDING);
    expect(readSealedHeader(fresh).keyId).toBe(B.id);
    expect(new StateSealer([B]).open(fresh, BINDING)).toEqual(state);
  });

  it('refuses unusable keys and bindings', () => {
    expect(() => new StateSealer([])).toThrow(/at least one key/);
    expect(() => new StateSealer([{ id: 'a', key: randomBytes(16) }])).toThrow(/32 bytes/);
    expect(() => new StateSealer([A, { ...B, id: 'a' }])).toThrow(/unique/);
    expect(() => new StateSealer([{ id: 'x'.repeat(256), key: randomBytes(32) }])).toThrow(/255/);
    const sealer = new StateSealer([A]);
    expect(() => sealer.seal(state, { ...BINDING, offset: -1 })).toThrow(/out of range/);
    expect(() => sealer.seal(state, { ...BINDING, fence: 2 ** 53 })).toThrow(/out of range/);
  });
});
