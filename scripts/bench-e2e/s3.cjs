// S3 side of bench:e2e: the s3rver the test suite uses (test/helpers/s3-server.ts starts it the same
// way: filesystem-backed, 127.0.0.1, credentials S3RVER/S3RVER), without the helper's counting proxy
// (the proxy would add a hop and a copy that are not part of hashq). The object is uploaded once and
// kept in .data/bench-s3 for later runs (re-uploaded when its size differs).
const fs = require('node:fs');

const BUCKET = 'hashq-bench';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

async function startS3(dir) {
  const S3rver = require('s3rver'); // the class itself (its `default` is Koa's Application, not s3rver)
  fs.mkdirSync(dir, { recursive: true });
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: BUCKET }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const { S3Client } = require('@aws-sdk/client-s3');
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    endpoint,
    bucket: BUCKET,
    client,
    /** Worker/API environment that reaches this server (loopback allowed explicitly). */
    env: {
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      HASHQ_ALLOW_HOSTS: '127.0.0.1',
    },
    stop: async () => {
      client.destroy();
      await server.close();
    },
  };
}

/**
 * Uploads `file` as `key` (multipart, 64 MiB parts sent as buffers) unless an object of the same
 * size is there already. Buffers, not a stream: the SDK would send a stream with aws-chunked
 * framing for its checksum trailer, which s3rver stores as part of the object.
 */
async function ensureObject(s3, key, file) {
  const {
    HeadObjectCommand,
    CreateMultipartUploadCommand,
    UploadPartCommand,
    CompleteMultipartUploadCommand,
  } = require('@aws-sdk/client-s3');
  const size = fs.statSync(file).size;
  const head = () =>
    s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key })).catch(() => null);
  if ((await head())?.ContentLength === size) return false;
  const partBytes = 64 * 1024 * 1024;
  const { UploadId } = await s3.client.send(
    new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: key }),
  );
  const parts = [];
  const fd = fs.openSync(file, 'r');
  try {
    for (let offset = 0, n = 1; offset < size || n === 1; offset += partBytes, n++) {
      const body = Buffer.allocUnsafe(Math.min(partBytes, size - offset));
      fs.readSync(fd, body, 0, body.length, offset);
      const { ETag } = await s3.client.send(
        new UploadPartCommand({ Bucket: s3.bucket, Key: key, UploadId, PartNumber: n, Body: body }),
      );
      parts.push({ ETag, PartNumber: n });
    }
  } finally {
    fs.closeSync(fd);
  }
  await s3.client.send(
    new CompleteMultipartUploadCommand({
      Bucket: s3.bucket,
      Key: key,
      UploadId,
      MultipartUpload: { Parts: parts },
    }),
  );
  const stored = (await head())?.ContentLength;
  if (stored !== size)
    throw new Error(`S3 object ${key} has ${stored} bytes after the upload, not ${size}`);
  return true;
}

module.exports = { startS3, ensureObject };
