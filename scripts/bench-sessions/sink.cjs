// The peer of bench:sessions: a plain node:http server that answers tus-like PATCHes by hashing
// each body with Node's crypto (zlib.crc32 stands in for crc64nvme, which Node lacks) and keeps
// nothing between requests: no state, no database, no fence. Prints its port, then serves.
const { createHash } = require('node:crypto');
const http = require('node:http');
const zlib = require('node:zlib');

const algorithms = (process.argv[2] ?? 'sha256').split(',');

const server = http.createServer((req, res) => {
  const hashes = algorithms.filter((name) => name !== 'crc64nvme').map((name) => createHash(name));
  let crc = algorithms.includes('crc64nvme') ? 0 : undefined;
  let bytes = 0;
  req.on('data', (chunk) => {
    bytes += chunk.length;
    for (const hash of hashes) hash.update(chunk);
    if (crc !== undefined) crc = zlib.crc32(chunk, crc);
  });
  req.on('end', () => {
    for (const hash of hashes) hash.digest();
    res
      .writeHead(204, {
        'Upload-Offset': String(Number(req.headers['upload-offset'] ?? 0) + bytes),
      })
      .end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
