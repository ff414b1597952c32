#!/usr/bin/env node
// A peer for the S3 case of bench:e2e: one GetObject of the whole object through @aws-sdk/client-s3
// (as the worker's S3 source does), body drained without hashing: what the local server and the
// SDK can deliver at most. Prints {"seconds":…,"bytes":…}.
//
// usage: s3-get.cjs ENDPOINT BUCKET KEY   (credentials S3RVER/S3RVER, path style)
const { GetObjectCommand, S3Client } = require('@aws-sdk/client-s3');

async function main() {
  const [endpoint, bucket, key] = process.argv.slice(2);
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const started = performance.now();
  const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  let bytes = 0;
  for await (const piece of out.Body) bytes += piece.length;
  process.stdout.write(JSON.stringify({ seconds: (performance.now() - started) / 1000, bytes }));
  client.destroy();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
