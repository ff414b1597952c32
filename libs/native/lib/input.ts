/**
 * What callers pass in: the input types, the hasher options, and their
 * checks (output lengths, customization strings) against the addon's limits.
 */
import { Bytes, native } from './addon';
import { AlgorithmInfo } from './algorithms';
import { BadArgumentError } from './errors';

/** Bytes to hash: a Buffer, any TypedArray or DataView, or a string (UTF-8). */
export type Input = Buffer | ArrayBufferView | string;

export interface HasherOptions {
  /** customization string (ascon-cxof128), at most 256 bytes */
  customization?: Input;
  /** default output length of an XOF, in bytes */
  outputLength?: number;
}

export interface HashOptions extends HasherOptions {
  /** output length in bytes (XOFs; fixed-length algorithms accept only their own) */
  length?: number;
}

/** Largest XOF output of one digest call (HQ_OUTLEN_MAX). */
export const MAX_OUTPUT = native.limits.outputMax;
/** Largest default output length a hasher (and its state) may carry (HQ_DEFAULT_OUTLEN_MAX). */
export const MAX_DEFAULT_OUTPUT = native.limits.defaultOutputMax;

export function toBytes(data: Input, what = 'data'): Bytes {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return data;
  throw new BadArgumentError(`${what} must be a Buffer, TypedArray, DataView or string`);
}

export function outputLength(
  info: AlgorithmInfo,
  length: number | undefined,
  fallback: number,
  max = MAX_OUTPUT,
): number {
  if (length === undefined) return fallback;
  if (!Number.isInteger(length) || length < 1 || length > max) {
    throw new BadArgumentError(`output length must be an integer in 1..${max}`);
  }
  if (!info.xof && length !== info.digestLength) {
    throw new BadArgumentError(
      `${info.name} has a fixed output length of ${info.digestLength} bytes`,
    );
  }
  return length;
}

export function customization(info: AlgorithmInfo, custom: Input | undefined): Bytes | undefined {
  if (custom === undefined) return undefined;
  if (!info.customizable) throw new BadArgumentError(`${info.name} takes no customization string`);
  return toBytes(custom, 'customization');
}
