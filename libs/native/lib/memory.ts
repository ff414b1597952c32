/**
 * The process's C heap, as far as hashing throughput depends on it.
 */
import { native } from './addon';

/**
 * Keeps up to `bytes` of freed memory at the top of the C heap instead of giving it back to the
 * kernel (glibc's M_TRIM_THRESHOLD). A process that receives a lot over sockets benefits: Node
 * allocates a new 64 KiB buffer for every read, and memory given back is paged in again, one fault
 * per 4 KiB. Returns false where the C library has no such setting (not glibc): nothing changed.
 */
export function retainFreedMemory(bytes: number): boolean {
  return native.retainFreedMemory(bytes);
}
