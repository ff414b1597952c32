/**
 * setRecvLowWater on a connected loopback socket (the mark reads back through the kernel: a read
 * waits for the bytes it asks) and on descriptors it does not apply to (a negated errno, no throw).
 */
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { constants } from 'node:os';

import { setRecvLowWater } from '../lib';

const fdOf = (socket: Socket) => (socket as unknown as { _handle: { fd: number } })._handle.fd;

describe('setRecvLowWater', () => {
  it('sets the mark of a connected socket: the reader is woken once that many bytes are queued', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
    const client = connect((server.address() as { port: number }).port, '127.0.0.1');
    await new Promise((resolve) => client.once('connect', resolve));
    const peer = await accepted;
    try {
      expect(setRecvLowWater(fdOf(client), 1000)).toBe(0);
      const pieces: number[] = [];
      client.on('data', (piece: Buffer) => pieces.push(piece.length));
      peer.write(Buffer.alloc(600));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(pieces).toEqual([]); // 600 < 1000 queued: not readable yet
      const woken = once(client, 'data');
      peer.write(Buffer.alloc(600));
      await woken;
      expect(pieces).toEqual([1200]);
      expect(setRecvLowWater(fdOf(client), 1)).toBe(0);
    } finally {
      client.destroy();
      peer.destroy();
      server.close();
    }
  });

  it('a descriptor that is no socket: a negated errno', () => {
    const fd = openSync(__filename, 'r');
    try {
      expect(setRecvLowWater(fd, 1024)).toBe(-constants.errno.ENOTSOCK);
    } finally {
      closeSync(fd);
    }
  });

  it('an argument that is no descriptor number throws ERR_BAD_ARGUMENT', () => {
    expect(() => setRecvLowWater(-1, 1)).toThrow(
      expect.objectContaining({ code: 'ERR_BAD_ARGUMENT' }),
    );
  });
});
