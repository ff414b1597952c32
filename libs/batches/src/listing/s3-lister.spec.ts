import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client, type SourceError } from '@hashq/sources';

import { s3ClientConfig } from '../../../../test/helpers/s3-server';
import {
  type S3ServerProcess,
  startS3ServerProcess,
} from '../../../../test/helpers/s3-server-process';
import { compareUtf8, decodeS3Key, S3Lister } from './s3-lister';
import type { ListedItem, Lister } from './types';

const BUCKET = 'listing';
const PREFIX = 'data/';

/** 1,024 bytes (S3's limit), in folders short enough for the test server's files. */
const LONG_KEY = `${PREFIX}${'l'.repeat(200)}/${'o'.repeat(200)}/${'n'.repeat(200)}/${'g'.repeat(200)}/`;
const KEY_1024 = LONG_KEY + 'k'.repeat(1024 - Buffer.byteLength(LONG_KEY));

const HARD_KEYS = [
  KEY_1024,
  `${PREFIX}with space.txt`,
  `${PREFIX}new\nline`,
  `${PREFIX}tab\there`,
  `${PREFIX}plus+sign%25 percent`,
  `${PREFIX}été/日本語.txt`,
  `${PREFIX}emoji 😀`,
  `${PREFIX}back\\slash`,
  `${PREFIX}amp&lt;<>"'`,
];

async function listAll(lister: Lister, pageSize: number, from: string | null = null) {
  const pages: Array<{ items: ListedItem[]; cursor: string | null }> = [];
  let cursor = from;
  do {
    const page = await lister.page(cursor, pageSize);
    pages.push(page);
    cursor = page.cursor;
  } while (cursor !== null);
  return pages;
}

describe('S3Lister', () => {
  let dir: string;
  let s3: S3ServerProcess;
  let client: S3Client;
  const bodies = new Map<string, string>();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hashq-s3list-'));
    s3 = await startS3ServerProcess(dir, [BUCKET, 'empty']);
    client = createS3Client(s3ClientConfig(s3));
    const keys = [...HARD_KEYS];
    for (let i = 0; keys.length < 2500; i++) keys.push(`${PREFIX}f/${String(i).padStart(5, '0')}`);
    keys.push('data', 'dat/', 'other/x', 'data0'); // beside the prefix: never listed
    keys.forEach((key, i) => bodies.set(key, `body ${i} `.repeat(i % 7)));
    let next = 0;
    const put = async () => {
      while (next < keys.length) {
        const key = keys[next++];
        await client.send(
          new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: Buffer.from(bodies.get(key)!) }),
        );
      }
    };
    await Promise.all(Array.from({ length: 8 }, put));
  }, 300_000);

  afterAll(async () => {
    client?.destroy();
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const expectedItems = (): ListedItem[] =>
    [...bodies.keys()]
      .filter((key) => key.startsWith(PREFIX))
      .sort(compareUtf8)
      .map((key) => ({
        name: key.slice(PREFIX.length),
        source: { type: 's3', bucket: BUCKET, key },
        size: Buffer.byteLength(bodies.get(key)!),
        etag: `"${createHash('md5').update(bodies.get(key)!).digest('hex')}"`,
      }));

  it('lists every object under the prefix once, in key order, exact names, sizes, ETags', async () => {
    const pages = await listAll(new S3Lister({ client, bucket: BUCKET, prefix: PREFIX }), 1000);
    expect(pages.map((page) => page.items.length)).toEqual([1000, 1000, 500]);
    const items = pages.flatMap((page) => page.items);
    expect(items).toEqual(expectedItems());
    expect(items.some((item) => item.name === KEY_1024.slice(PREFIX.length))).toBe(true);
    expect(Buffer.byteLength(KEY_1024)).toBe(1024);
  });

  it('resumes from every page cursor (fresh listers) with exactly the rest', async () => {
    const expected = expectedItems();
    const pages = await listAll(new S3Lister({ client, bucket: BUCKET, prefix: PREFIX }), 333);
    expect(pages.flatMap((page) => page.items)).toEqual(expected);
    let done = 0;
    for (const page of pages) {
      done += page.items.length;
      if (page.cursor === null) continue;
      const lister = new S3Lister({ client, bucket: BUCKET, prefix: PREFIX });
      const rest = await listAll(lister, 1000, page.cursor);
      expect(rest.flatMap((p) => p.items)).toEqual(expected.slice(done));
    }
  });

  it('starts after startAfter; an empty prefix lists nothing', async () => {
    const expected = expectedItems();
    const startAfter = expected[1234].source.type === 's3' ? expected[1234].source.key : '';
    const pages = await listAll(
      new S3Lister({ client, bucket: BUCKET, prefix: PREFIX, startAfter }),
      700,
    );
    expect(pages.flatMap((page) => page.items)).toEqual(expected.slice(1235));
    const none = new S3Lister({ client, bucket: BUCKET, prefix: 'nothing-here/' });
    expect(await none.page(null, 10)).toEqual({ items: [], cursor: null });
    const empty = new S3Lister({ client, bucket: 'empty', prefix: '' });
    expect(await empty.page(null, 10)).toEqual({ items: [], cursor: null });
  });

  it('a missing bucket is SOURCE_NOT_FOUND, bad credentials SOURCE_FORBIDDEN', async () => {
    const missing = await new S3Lister({ client, bucket: 'no-such-bucket', prefix: '' })
      .page(null, 10)
      .catch((err: SourceError) => err);
    expect((missing as SourceError).code).toBe('SOURCE_NOT_FOUND');
    const stranger = createS3Client(
      s3ClientConfig(s3, { S3_ACCESS_KEY_ID: 'NOBODY', S3_SECRET_ACCESS_KEY: 'wrong' }),
    );
    try {
      const denied = await new S3Lister({ client: stranger, bucket: BUCKET, prefix: '' })
        .page(null, 10)
        .catch((err: SourceError) => err);
      expect((denied as SourceError).code).toBe('SOURCE_FORBIDDEN');
    } finally {
      stranger.destroy();
    }
  });

  it('decodes keys as S3 encodes them for EncodingType=url', () => {
    expect(decodeS3Key('a+b%2Bc%20d%0Ae%C3%A9')).toBe('a b+c d\ne\u00e9');
  });

  it('asks for URL-encoded keys and decodes them only when the answer says so (a CR survives)', async () => {
    // The test server ignores encoding-type (and its XML turns a CR into a LF): answers as S3 gives them.
    const asked: Array<Record<string, unknown>> = [];
    const answers = [
      {
        EncodingType: 'url',
        IsTruncated: true,
        Contents: [{ Key: 'p/cr%0Dreturn+1', Size: 1, ETag: '"e1"' }],
      },
      { IsTruncated: false, Contents: [{ Key: 'p/raw%41+2', Size: 2, ETag: '"e2"' }] },
    ];
    const fake = {
      send: async (command: { input: Record<string, unknown> }) => {
        asked.push(command.input);
        return answers.shift();
      },
    } as unknown as S3Client;
    const page = await new S3Lister({ client: fake, bucket: 'b', prefix: 'p/' }).page(null, 10);
    expect(page).toEqual({
      items: [
        {
          name: 'cr\rreturn 1',
          source: { type: 's3', bucket: 'b', key: 'p/cr\rreturn 1' },
          size: 1,
          etag: '"e1"',
        },
        {
          name: 'raw%41+2',
          source: { type: 's3', bucket: 'b', key: 'p/raw%41+2' },
          size: 2,
          etag: '"e2"',
        },
      ],
      cursor: null,
    });
    expect(asked.map((input) => [input.StartAfter, input.EncodingType, input.Prefix])).toEqual([
      [undefined, 'url', 'p/'],
      ['p/cr\rreturn 1', 'url', 'p/'],
    ]);
  });
});
