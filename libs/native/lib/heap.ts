/**
 * An allocator setting for servers that stream: the addon sets it, Node has no call for it.
 */
import { native } from './addon';

/**
 * Makes glibc's malloc keep up to `bytes` of freed memory at the top of its heaps instead of giving
 * it back to the kernel at 128 KiB (M_TRIM_THRESHOLD; after a trim it keeps a quarter, M_TOP_PAD).
 * A server that reads bodies allocates a 64 KiB buffer per read and frees them in batches when V8
 * collects them; with glibc's default it may return those pages and fault them in again on the next
 * reads, one page fault per 4 KiB. What is kept stays resident: the process may hold up to
 * `bytes` more than it would. Returns false, and changes nothing, under another C library. Throws
 * ERR_BAD_ARGUMENT unless 0 <= bytes < 2^31.
 */
export function retainFreedHeap(bytes: number): boolean {
  return native.retainFreedHeap(bytes);
}
