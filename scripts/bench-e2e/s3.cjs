// S3 side of bench:e2e and bench:batch: the s3rver the test suite uses (filesystem-backed, 127.0.0.1,
// credentials S3RVER/S3RVER), in a child Node process as test/helpers/s3-server-process.ts starts
// it: --openssl-legacy-provider (s3rver's continuation tokens need DES), and its own event loop, so
// that peers run with spawnSync (rclone) do not stall the server, and the server's CPU is its own.
// No counting proxy (it would add a hop and a copy that are not part of hashq). Objects are uploaded
// once and kept in the server's directory under .data for later runs.
const { spawn } = require('node:child_process');
const { randomBytes, randomFillSync } = require('node:crypto');
const fs = require('node:fs');
const readline = require('node:readline');

const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

const SERVER_SCRIPT = `
const S3rver = require('s3rver');
const [dir, buckets] = [process.argv[1], JSON.parse(process.argv[2])];
new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir,
  configureBuckets: buckets.map((name) => ({ name })) })
  .run()
  .then((address) => console.log(JSON.stringify({ port: address.port })));
`;

/** s3rver serving `dir` with `bucket` in a child process; an SDK client and the peers' settings. */
async function startS3(dir, bucket = 'hashq-bench') {
  fs.mkdirSync(dir, { recursive: true });
  const child = spawn(
    process.execPath,
    ['--openssl-legacy-provider', '-e', SERVER_SCRIPT, dir, JSON.stringify([bucket])],
    { cwd: __dirname, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const port = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
    readline
      .createInterface({ input: child.stdout })
      .once('line', (line) => resolve(JSON.parse(line).port));
  });
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
    bucket,
    client,
    pid: child.pid,
    /** Worker/API environment that reaches this server (loopback allowed explicitly). */
    env: {
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      HASHQ_ALLOW_HOSTS: '127.0.0.1',
    },
    /** rclone's remote `hashqs3:` for this server, from the environment alone (no config file). */
    rcloneEnv: rcloneEnv(endpoint),
    stop: async () => {
      client.destroy();
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Environment of an rclone whose remote `hashqs3:` is the server at `endpoint`. */
function rcloneEnv(endpoint) {
  const env = {
    ...process.env,
    RCLONE_CONFIG_HASHQS3_TYPE: 's3',
    RCLONE_CONFIG_HASHQS3_PROVIDER: 'Other',
    RCLONE_CONFIG_HASHQS3_ENDPOINT: endpoint,
    RCLONE_CONFIG_HASHQS3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    RCLONE_CONFIG_HASHQS3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    RCLONE_CONFIG_HASHQS3_REGION: 'us-east-1',
    RCLONE_CONFIG_HASHQS3_FORCE_PATH_STYLE: 'true',
    RCLONE_CONFIG: '/dev/null', // no config file of the user's may add or change a remote
  };
  delete env.AWS_CA_BUNDLE; // rclone refuses a bundle it cannot read; the server is plain HTTP
  return env;
}

const head = (s3, key) =>
  s3.client
    .send(new (require('@aws-sdk/client-s3').HeadObjectCommand)({ Bucket: s3.bucket, Key: key }))
    .catch(() => null);

/**
 * Uploads `size` bytes read by `fill(buffer, offset)` as `key` (multipart, 64 MiB parts sent as
 * buffers) unless an object of that size is there already. Buffers, not a stream: the SDK would
 * send a stream with aws-chunked framing for its checksum trailer, which s3rver stores as part of
 * the object.
 */
async function ensureMultipart(s3, key, size, fill) {
  const {
    CreateMultipartUploadCommand,
    UploadPartCommand,
    CompleteMultipartUploadCommand,
  } = require('@aws-sdk/client-s3');
  if ((await head(s3, key))?.ContentLength === size) return false;
  const partBytes = 64 * 1024 * 1024;
  const { UploadId } = await s3.client.send(
    new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: key }),
  );
  const parts = [];
  for (let offset = 0, n = 1; offset < size || n === 1; offset += partBytes, n++) {
    const body = Buffer.allocUnsafe(Math.min(partBytes, size - offset));
    fill(body, offset);
    const { ETag } = await s3.client.send(
      new UploadPartCommand({ Bucket: s3.bucket, Key: key, UploadId, PartNumber: n, Body: body }),
    );
    parts.push({ ETag, PartNumber: n });
  }
  await s3.client.send(
    new CompleteMultipartUploadCommand({
      Bucket: s3.bucket,
      Key: key,
      UploadId,
      MultipartUpload: { Parts: parts },
    }),
  );
  const stored = (await head(s3, key))?.ContentLength;
  if (stored !== size)
    throw new Error(`S3 object ${key} has ${stored} bytes after the upload, not ${size}`);
  return true;
}

/** Uploads `file` as `key` unless an object of the same size is there already. */
async function ensureObject(s3, key, file) {
  const fd = fs.openSync(file, 'r');
  try {
    return await ensureMultipart(s3, key, fs.statSync(file).size, (body, offset) =>
      fs.readSync(fd, body, 0, body.length, offset),
    );
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Fills `prefix` with `small.count` random objects of `small.bytes` (PutObject, 16 at once) and
 * `big.count` random objects of `big.bytes` (multipart). Slow once (minutes for GiBs): `marker` (a
 * file beside the server's directory) says the set is complete, and a set it does not describe is
 * written again.
 */
async function ensureObjectSet(s3, prefix, small, big, marker) {
  const { PutObjectCommand } = require('@aws-sdk/client-s3');
  const wanted = JSON.stringify({ prefix, small, big });
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8') === wanted) return false;
  console.log(
    `[bench] uploading ${small.count} x ${small.bytes} B and ${big.count} x ${big.bytes} B to s3://${s3.bucket}/${prefix}`,
  );
  let next = 0;
  const lane = async () => {
    while (next < small.count) {
      const i = next++;
      const key = `${prefix}small/${String(Math.floor(i / 1000)).padStart(3, '0')}/o${String(i).padStart(6, '0')}.bin`;
      await s3.client.send(
        new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: randomBytes(small.bytes) }),
      );
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  for (let i = 0; i < big.count; i++) {
    await ensureMultipart(s3, `${prefix}big/b${i}.bin`, big.bytes, (body) => randomFillSync(body));
  }
  fs.writeFileSync(marker, wanted);
  return true;
}

module.exports = { startS3, ensureObject, ensureObjectSet, rcloneEnv };
