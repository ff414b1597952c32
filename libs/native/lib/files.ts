/**
 * File input on libuv's thread pool (binding/file_calls.cc, src/file_io.c):
 * one pool thread reads a piece into a small reused buffer and hashes it
 * while it is still in that core's cache.
 *
 * - updateFromFile: a range of an already-open descriptor into one or more
 *   Hashers (big files; the Hashers keep their states, so checkpoints work as
 *   with update()).
 * - hashFiles: many small files beneath a directory descriptor, each opened
 *   with openat2 (RESOLVE_BENEATH), checked, read and hashed whole; one
 *   result per name, never a throw for one bad file.
 * - openBeneath: one regular file opened beneath a root for the caller (the
 *   file sources' fast path), in one pool task.
 */
import { constants as osConstants } from 'node:os';

import { native } from './addon';
import { lookup } from './algorithms';
import { BadArgumentError, BusyError, HashqError } from './errors';
import { createHasher, Hasher, hasherContext, setHasherBusy } from './hasher';

/**
 * Read buffer of updateFromFile (bytes) where it reads with pread (ranges under 1 MiB, files that
 * cannot be mapped): pieces this size are read and hashed at once, so they never leave the core's
 * L2 cache. Measured (README, "File input"): 64 KiB–1 MiB are within a few per cent of each other;
 * 256 KiB is the middle of that plateau.
 */
export const FILE_BUFFER_BYTES = 256 * 1024;
/** Read buffer of hashFiles (bytes): small files fit in one read. */
export const FILES_BUFFER_BYTES = 256 * 1024;

/** errno number → name ('ENOENT', …). */
const errnoNames: string[] = [];
for (const [name, n] of Object.entries(osConstants.errno)) errnoNames[n] ??= name;

function errnoName(errno: number): string {
  return errnoNames[errno] ?? `E${errno}`;
}

/** A failed read of a descriptor: `code` is the errno's name (EBADF, EIO, EISDIR, …), as Node's fs errors. */
export class FileReadError extends HashqError {
  readonly errno: number;
  readonly syscall: string;
  constructor(errno: number, syscall: string) {
    super(errnoName(errno), `${syscall} failed: ${errnoName(errno)}`);
    this.errno = errno;
    this.syscall = syscall;
  }
}

export interface UpdateFromFileOptions {
  /** Read buffer of the pread path, 4 KiB–16 MiB (default FILE_BUFFER_BYTES). */
  bufferSize?: number;
}

function checkInteger(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new BadArgumentError(`${what} must be a safe integer >= 0`);
}

/**
 * Reads [offset, offset + length) of the open descriptor `fd` on one pool thread and absorbs it
 * into every hasher (each byte once into each): a range of 1 MiB or more of a regular file from a
 * mapping of the page cache on 64-bit Linux (no copy; README, "Mapped reads"), else with pread.
 * Resolves with the bytes absorbed: fewer than `length` means the file ended first, or shrank while
 * it was read (the hashers then hold exactly the bytes counted). A failed read rejects with a
 * FileReadError (`code` = errno name); the hashers then hold an unspecified prefix of the range.
 * While it runs the hashers refuse other calls (BusyError), as with updateAsync. The addon
 * duplicates `fd` for the read: closing it meanwhile is safe. The whole range runs as one pool
 * task: give ranges of a few MiB so checkpoints, cancels and other pool work get their turn.
 */
export function updateFromFile(
  hashers: Hasher | readonly Hasher[],
  fd: number,
  offset: number,
  length: number,
  options: UpdateFromFileOptions = {},
): Promise<number> {
  const list = Array.isArray(hashers) ? (hashers as readonly Hasher[]) : [hashers as Hasher];
  try {
    if (list.length === 0) throw new BadArgumentError('at least one hasher is needed');
    if (new Set(list).size !== list.length)
      throw new BadArgumentError('the same hasher is given twice');
    checkInteger(fd, 'fd');
    checkInteger(offset, 'offset');
    checkInteger(length, 'length');
  } catch (err) {
    return Promise.reject(err);
  }
  if (list.some((h) => h.busy)) return Promise.reject(new BusyError());
  if (length === 0) return Promise.resolve(0);
  const ctxs = list.map((h) => hasherContext(h));
  return new Promise<number>((resolve, reject) => {
    const release = () => list.forEach((h) => setHasherBusy(h, false));
    list.forEach((h) => setHasherBusy(h, true));
    let rc: number;
    try {
      rc = native.updateFromFile(
        ctxs,
        fd,
        offset,
        length,
        options.bufferSize ?? FILE_BUFFER_BYTES,
        (errno, bytes) => {
          release();
          if (errno) reject(new FileReadError(errno, 'pread'));
          else resolve(bytes);
        },
      );
    } catch (err) {
      release();
      reject(err);
      return;
    }
    if (rc < 0) {
      release();
      reject(new FileReadError(-rc, 'dup'));
    }
  });
}

/** Why hashFiles has no digest for a name; the codes of the service's file sources. */
export type FileErrorCode =
  | 'SOURCE_NOT_FOUND'
  | 'SOURCE_FORBIDDEN'
  | 'PATH_OUTSIDE_ROOTS'
  | 'NOT_A_REGULAR_FILE'
  | 'SOURCE_CHANGED'
  | 'SOURCE_UNSUPPORTED'
  | 'SOURCE_READ_FAILED';

export interface FileError {
  code: FileErrorCode;
  message: string;
  /** The errno behind it ('ENOENT', 'EXDEV', …), or null (not a regular file, changed). */
  errno: string | null;
}

const FILE_ERRORS: Record<number, { code: FileErrorCode; message: string }> = {
  [native.fileStatus.NOT_FOUND]: { code: 'SOURCE_NOT_FOUND', message: 'file does not exist' },
  [native.fileStatus.FORBIDDEN]: { code: 'SOURCE_FORBIDDEN', message: 'permission denied' },
  [native.fileStatus.OUTSIDE]: {
    code: 'PATH_OUTSIDE_ROOTS',
    message: 'the name leads out of the directory or through a refused symbolic link',
  },
  [native.fileStatus.NOT_REGULAR]: { code: 'NOT_A_REGULAR_FILE', message: 'not a regular file' },
  [native.fileStatus.CHANGED]: {
    code: 'SOURCE_CHANGED',
    message: 'file changed while it was read',
  },
  [native.fileStatus.UNSUPPORTED]: {
    code: 'SOURCE_UNSUPPORTED',
    message: 'openat2 is not available on this system',
  },
  [native.fileStatus.READ_FAILED]: { code: 'SOURCE_READ_FAILED', message: 'read failed' },
};

export interface HashFilesOptions {
  /** XOF output length in bytes (default 32), as for createHasher. */
  outputLength?: number;
  /** ascon-cxof128's customization. */
  customization?: Uint8Array;
  /**
   * Follow symbolic links that stay beneath the directory (default true; absolute targets and
   * targets outside are refused, PATH_OUTSIDE_ROOTS). false: refuse every symbolic link.
   */
  followSymlinks?: boolean;
  /** Pool tasks the list is split into (default 2: one per core here); 1–16. */
  parallel?: number;
  /** Read buffer, 4 KiB–16 MiB (default FILES_BUFFER_BYTES). */
  bufferSize?: number;
}

/** One file's result in the convenient (allocating) form of HashFilesResult.toArray(). */
export type HashedFile =
  | { size: number; mtimeNs: bigint; dev: bigint; ino: bigint; digests: Buffer[] }
  | { error: FileError };

/**
 * hashFiles' results, in flat arrays (no object per file): entry i is names[i].
 * `digests` holds every file's digests one after another, `stride` bytes per file, algorithm a at
 * `digestOffsets[a]`.
 */
export class HashFilesResult {
  /** @internal */
  constructor(
    readonly count: number,
    readonly algorithms: readonly string[],
    readonly digestLengths: readonly number[],
    readonly digestOffsets: readonly number[],
    readonly stride: number,
    /** count × stride bytes; the bytes of a failed file are unspecified. */
    readonly digests: Buffer,
    /** count × 4: size, mtime (ns), dev, ino (fstat of the opened file). */
    readonly info: BigInt64Array,
    /** count × 2: native status (0 ok), errno. */
    readonly status: Int32Array,
  ) {}

  ok(i: number): boolean {
    return this.status[2 * i] === 0;
  }

  size(i: number): number {
    return Number(this.info[4 * i]);
  }

  mtimeNs(i: number): bigint {
    return this.info[4 * i + 1];
  }

  dev(i: number): bigint {
    return BigInt.asUintN(64, this.info[4 * i + 2]);
  }

  ino(i: number): bigint {
    return BigInt.asUintN(64, this.info[4 * i + 3]);
  }

  /** Digest of algorithm number `a` (in the order given) for file i: a view into `digests`. */
  digest(i: number, a = 0): Buffer {
    const at = i * this.stride + this.digestOffsets[a];
    return this.digests.subarray(at, at + this.digestLengths[a]);
  }

  /** Why file i has no digest, or null when it has. */
  error(i: number): FileError | null {
    const status = this.status[2 * i];
    if (status === 0) return null;
    const errno = this.status[2 * i + 1];
    const known = FILE_ERRORS[status] ?? FILE_ERRORS[native.fileStatus.READ_FAILED];
    const name = errno ? errnoName(errno) : null;
    return {
      code: known.code,
      message:
        name && known.code === 'SOURCE_READ_FAILED' ? `${known.message}: ${name}` : known.message,
      errno: name,
    };
  }

  /** One object per file (allocates: for tests and small lists). */
  toArray(): HashedFile[] {
    const out: HashedFile[] = [];
    for (let i = 0; i < this.count; i++) {
      const error = this.error(i);
      if (error) out.push({ error });
      else
        out.push({
          size: this.size(i),
          mtimeNs: this.mtimeNs(i),
          dev: this.dev(i),
          ino: this.ino(i),
          digests: this.algorithms.map((_, a) => Buffer.from(this.digest(i, a))),
        });
    }
    return out;
  }
}

/** Names as one buffer of NUL-terminated names. */
function joinNames(names: readonly (string | Uint8Array)[]): Buffer {
  if (names.every((n) => typeof n === 'string')) {
    return Buffer.from(names.length ? `${(names as string[]).join('\0')}\0` : '', 'utf8');
  }
  const parts: Uint8Array[] = [];
  const zero = new Uint8Array(1);
  for (const n of names) {
    parts.push(typeof n === 'string' ? Buffer.from(n, 'utf8') : n, zero);
  }
  return Buffer.concat(parts);
}

/**
 * Hashes each file `names[i]` (relative to the open directory `dirFd`) with every algorithm, on the
 * thread pool. Each name is opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so no
 * name or symbolic link can lead above `dirFd` (pass the root's descriptor and names relative to it
 * so that links between its subdirectories resolve). A file that is not regular, missing, forbidden,
 * outside, or that changed while it was read gets an error in its entry; the promise rejects only
 * for bad arguments or a `dirFd` that is not open. Files are read from 0 to the size fstat gave and
 * checked again (fstat) after the read.
 */
export function hashFiles(
  dirFd: number,
  names: readonly (string | Uint8Array)[],
  algorithms: readonly string[],
  options: HashFilesOptions = {},
): Promise<HashFilesResult> {
  let setup: {
    buf: Buffer;
    templates: Uint8Array[];
    outlens: Uint32Array;
    result: HashFilesResult;
    parts: number;
  };
  try {
    checkInteger(dirFd, 'dirFd');
    if (!Array.isArray(names)) throw new BadArgumentError('names must be an array');
    if (algorithms.length === 0 || algorithms.length > 8)
      throw new BadArgumentError('from 1 to 8 algorithms are needed');
    const parallel = options.parallel ?? 2;
    if (!Number.isInteger(parallel) || parallel < 1 || parallel > 16)
      throw new BadArgumentError('parallel must be an integer from 1 to 16');
    const hashers = algorithms.map((name) =>
      createHasher(name, {
        outputLength: lookup(name).xof ? options.outputLength : undefined,
        customization: options.customization,
      }),
    );
    const outlens = Uint32Array.from(hashers.map((h) => h.outputLength));
    const offsets: number[] = [];
    let stride = 0;
    for (const n of outlens) {
      offsets.push(stride);
      stride += n;
    }
    const count = names.length;
    const result = new HashFilesResult(
      count,
      [...algorithms],
      [...outlens],
      offsets,
      stride,
      Buffer.alloc(count * stride),
      new BigInt64Array(count * 4),
      new Int32Array(count * 2),
    );
    const parts = Math.max(1, Math.min(parallel, Math.floor(count / 16)));
    setup = {
      buf: joinNames(names),
      templates: hashers.map((h) => hasherContext(h)),
      outlens,
      result,
      parts,
    };
  } catch (err) {
    return Promise.reject(err);
  }
  const { buf, templates, outlens, result, parts } = setup;
  const count = result.count;
  if (count === 0) return Promise.resolve(result);
  const flags = options.followSymlinks === false ? 1 : 0;
  const bufferSize = options.bufferSize ?? FILES_BUFFER_BYTES;
  const runs: Promise<void>[] = [];
  for (let p = 0; p < parts; p++) {
    const start = Math.floor((count * p) / parts);
    const end = Math.floor((count * (p + 1)) / parts);
    runs.push(
      new Promise<void>((resolve, reject) => {
        try {
          const rc = native.hashFiles(
            dirFd,
            buf,
            count,
            start,
            end,
            templates,
            outlens,
            flags,
            result.digests,
            result.info,
            result.status,
            bufferSize,
            resolve,
          );
          if (rc < 0) reject(new FileReadError(-rc, 'dup'));
        } catch (err) {
          reject(err);
        }
      }),
    );
  }
  // A failure of one part (only argument errors, thrown before any pool work) fails the call.
  return Promise.all(runs).then(() => result);
}

/** openBeneath's answer: enum hq_file_status by name (CHANGED is never given). */
export type OpenBeneathStatus =
  'OK' | 'NOT_FOUND' | 'FORBIDDEN' | 'OUTSIDE' | 'NOT_REGULAR' | 'UNSUPPORTED' | 'READ_FAILED';

const openStatuses: OpenBeneathStatus[] = [];
for (const [name, n] of Object.entries(native.fileStatus))
  openStatuses[n] = name as OpenBeneathStatus;

export interface OpenBeneathResult {
  /**
   * OK; NOT_FOUND (ENOENT, ENOTDIR, ENAMETOOLONG); FORBIDDEN (EACCES); OUTSIDE (EXDEV: `..` above
   * the root or an absolute symbolic link; ELOOP: a magic link or too many links; EAGAIN: a rename
   * race the kernel could not rule out); NOT_REGULAR; UNSUPPORTED (no openat2: ENOSYS, or EPERM /
   * EINVAL from a seccomp filter or an old kernel; no /proc); READ_FAILED (any other errno).
   */
  status: OpenBeneathStatus;
  /** The errno behind a failure ('ENOENT', 'EXDEV', …), or null. */
  errno: string | null;
  /** O_RDONLY | O_CLOEXEC, the caller's to close; -1 unless OK and keepOpen. */
  fd: number;
  /** The kernel's name of the opened file (readlink of /proc/self/fd/N); '' unless OK. */
  path: string;
  /** fstat of the file (OK, NOT_REGULAR), as fstat(fd, { bigint: true }); 0n otherwise. */
  size: bigint;
  mtimeNs: bigint;
  dev: bigint;
  ino: bigint;
  mode: bigint;
}

export interface OpenBeneathOptions {
  /** false: close the file on the pool thread and report its name and fstat only (default true). */
  keepOpen?: boolean;
}

/**
 * Opens the regular file `relative` beneath the directory `root` in one pool task, never opening
 * anything else for real: `root` with O_PATH | O_DIRECTORY (symbolic links in it followed),
 * `relative` with openat2(O_PATH, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so neither `..` nor a
 * symbolic link leads above `root` and a FIFO or device is only named; fstat must say regular; then
 * the file is reopened O_RDONLY through /proc/self/fd, whose link names it. '' or '.' is `root`
 * itself (NOT_REGULAR). Resolves with the status for every file-level answer; rejects only for bad
 * arguments (ERR_BAD_ARGUMENT: not strings, NUL, empty root).
 */
export function openBeneath(
  root: string,
  relative: string,
  options: OpenBeneathOptions = {},
): Promise<OpenBeneathResult> {
  return new Promise<OpenBeneathResult>((resolve, reject) => {
    try {
      native.openBeneath(
        root,
        relative,
        options.keepOpen ?? true,
        (status, errno, fd, path, size, mtimeNs, dev, ino, mode) =>
          resolve({
            status: openStatuses[status] ?? 'READ_FAILED',
            errno: errno ? errnoName(errno) : null,
            fd,
            path,
            size,
            mtimeNs,
            dev,
            ino,
            mode,
          }),
      );
    } catch (err) {
      reject(err);
    }
  });
}
