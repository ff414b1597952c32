import { type BigIntStats, close, fstat, read } from 'node:fs';

/**
 * What the file sources use of an open file. Node's FileHandle has these members (the JS walk's
 * answer); DescriptorFile gives them over a raw descriptor (the native open's answer: Node cannot
 * wrap a descriptor in a FileHandle).
 */
export interface ReadableFile {
  readonly fd: number;
  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }>;
  stat(options: { bigint: true }): Promise<BigIntStats>;
  close(): Promise<void>;
}

function closedError(syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`EBADF: bad file descriptor, ${syscall}`), {
    code: 'EBADF',
    syscall,
  });
}

/** Closes the descriptor of a DescriptorFile collected unclosed, as Node does for a FileHandle. */
const unclosed = new FinalizationRegistry<number>((fd) => close(fd, () => undefined));

/**
 * A descriptor this object owns. As with a FileHandle, close() waits for the reads and fstats in
 * flight (a number closed under a queued read could be reused by another open and read from), runs
 * once however often it is called, and later calls are refused (EBADF) instead of reaching the number;
 * one collected unclosed is closed.
 */
export class DescriptorFile implements ReadableFile {
  private inFlight = 0;
  private idle: (() => void) | undefined;
  private closing: Promise<void> | undefined;

  constructor(readonly fd: number) {
    unclosed.register(this, fd, this);
  }

  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }> {
    return this.run<number>('read', (done) =>
      read(this.fd, buffer, offset, length, position, done),
    ).then((bytesRead) => ({ bytesRead }));
  }

  stat(options: { bigint: true }): Promise<BigIntStats> {
    return this.run<BigIntStats>('fstat', (done) => fstat(this.fd, options, done));
  }

  close(): Promise<void> {
    if (!this.closing) unclosed.unregister(this);
    this.closing ??= new Promise<void>((resolve) => {
      if (this.inFlight === 0) resolve();
      else this.idle = resolve;
    }).then(
      () =>
        new Promise<void>((resolve, reject) =>
          close(this.fd, (err) => (err ? reject(err) : resolve())),
        ),
    );
    return this.closing;
  }

  private run<T>(
    syscall: string,
    call: (done: (err: NodeJS.ErrnoException | null, value: T) => void) => void,
  ): Promise<T> {
    if (this.closing) return Promise.reject(closedError(syscall));
    this.inFlight++;
    return new Promise<T>((resolve, reject) => {
      call((err, value) => {
        if (--this.inFlight === 0) this.idle?.();
        if (err) reject(err);
        else resolve(value);
      });
    });
  }
}
