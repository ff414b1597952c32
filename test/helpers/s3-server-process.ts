import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * s3rver in a child Node started with --openssl-legacy-provider. In-process s3rver cannot answer a
 * truncated ListObjectsV2 under OpenSSL 3: its continuation token is DES-encrypted and DES lives in
 * the legacy provider, so every listing longer than one page fails with InternalError. Tests of
 * listings that span pages use this server (same credentials as startS3Server: S3RVER/S3RVER).
 */
export interface S3ServerProcess {
  endpoint: string;
  stop(): Promise<void>;
}

const SCRIPT = `
const S3rver = require('s3rver');
const [dir, buckets] = [process.argv[1], JSON.parse(process.argv[2])];
new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir,
  configureBuckets: buckets.map((name) => ({ name })) })
  .run()
  .then((address) => console.log(JSON.stringify({ port: address.port })));
`;

export async function startS3ServerProcess(
  dir: string,
  buckets: string[],
): Promise<S3ServerProcess> {
  const child = spawn(
    process.execPath,
    ['--openssl-legacy-provider', '-e', SCRIPT, dir, JSON.stringify(buckets)],
    { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) =>
      resolve((JSON.parse(line) as { port: number }).port),
    );
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
