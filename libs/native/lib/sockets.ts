/**
 * A socket option for readers of network sources: the addon sets it, Node has no call for it.
 */
import { native } from './addon';

/**
 * Sets the receive low-water mark (SO_RCVLOWAT) of a connected TCP socket's descriptor: it polls
 * readable once `bytes` are queued, or at its end, so a fast stream is read in fewer, larger
 * pieces (Linux also wakes a reader whose window is nearly closed). Returns 0 or a negated errno;
 * the mark is an optimization, a caller may go on without it.
 */
export function setRecvLowWater(fd: number, bytes: number): number {
  return native.setRecvLowWater(fd, bytes);
}
