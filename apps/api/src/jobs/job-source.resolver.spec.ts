import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { HashqConfigModule } from '@hashq/config';
import { HttpStatus } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import pino from 'pino';

import { stateKeysEnv, testStateKey } from '../../../../test/helpers/env';
import { ApiError, type ApiErrorCode, type ErrorBody } from '../common/api-error';
import { JobSourceResolver } from './job-source.resolver';

/**
 * The source of POST /v1/jobs, resolved against a real folder: a temporary HASHQ_FILE_ROOTS with
 * a file, a folder and symbolic links in it, and a file outside it.
 */
describe('JobSourceResolver', () => {
  let resolver: JobSourceResolver;
  let base: string;
  let root: string;
  let outside: string;
  const bytes = Buffer.from('twelve bytes');

  /** The status, code and details of the ApiError `resolve` rejects with: what the client gets. */
  const refusal = async (
    source: unknown,
  ): Promise<{ status: number; code: ApiErrorCode; details: unknown }> => {
    const err = await resolver.resolve(source).then(
      () => new Error('the source was accepted'),
      (error: unknown) => error,
    );
    expect(err).toBeInstanceOf(ApiError);
    const { error } = (err as ApiError).getResponse() as ErrorBody;
    expect(error.message).toEqual(expect.any(String));
    return { status: (err as ApiError).getStatus(), code: error.code, details: error.details };
  };
  /** For it.each: the source is refused with 400 INVALID_SOURCE, itself as the details. */
  const expectInvalidSource = async (_: string, source: unknown) => {
    const { status, code, details } = await refusal(source);
    expect([status, code, details]).toEqual([HttpStatus.BAD_REQUEST, 'INVALID_SOURCE', { source }]);
  };

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'hashq-resolver-')));
    root = join(base, 'root');
    await mkdir(join(root, 'folder'), { recursive: true });
    await writeFile(join(root, 'file.bin'), bytes);
    await writeFile(join(root, 'empty.bin'), '');
    outside = join(base, 'outside.bin');
    await writeFile(outside, 'secret');
    await symlink(join(root, 'file.bin'), join(root, 'inside-link'));
    await symlink(outside, join(root, 'outside-link'));
    await symlink(join(root, 'loop-b'), join(root, 'loop-a'));
    await symlink(join(root, 'loop-a'), join(root, 'loop-b'));

    const moduleRef = await Test.createTestingModule({
      imports: [
        HashqConfigModule.forRoot({
          env: {
            HASHQ_FILE_ROOTS: root,
            HASHQ_ALLOW_HOSTS: '10.1.0.0/16,minio.internal',
            HASHQ_STATE_KEYS: stateKeysEnv(testStateKey('resolver')),
          },
          logger: pino({ level: 'silent' }),
        }),
      ],
      providers: [JobSourceResolver],
    }).compile();
    resolver = moduleRef.get(JobSourceResolver);
  });

  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  describe('file sources', () => {
    it('resolve an object or a file URL to the real path and the size on disk', async () => {
      const path = join(root, 'file.bin');
      const resolved = { ref: { type: 'file', path }, size: bytes.length };
      expect(await resolver.resolve({ type: 'file', path })).toEqual(resolved);
      expect(await resolver.resolve(pathToFileURL(path).href)).toEqual(resolved);
      expect(await resolver.resolve(`file://localhost${path}`)).toEqual(resolved);
      expect(await resolver.resolve({ type: 'file', path: join(root, 'empty.bin') })).toEqual({
        ref: { type: 'file', path: join(root, 'empty.bin') },
        size: 0,
      });
    });

    it('follow a symbolic link that stays inside the roots', async () => {
      expect(await resolver.resolve({ type: 'file', path: join(root, 'inside-link') })).toEqual({
        ref: { type: 'file', path: join(root, 'file.bin') },
        size: bytes.length,
      });
    });

    it('are refused with 403 PATH_OUTSIDE_ROOTS outside the roots, through "..", a link or a link loop', async () => {
      for (const path of [
        outside,
        `${root}/../outside.bin`,
        join(root, 'outside-link'),
        join(root, 'loop-a'),
      ]) {
        const { status, code, details } = await refusal({ type: 'file', path });
        expect([status, code, details]).toEqual([
          HttpStatus.FORBIDDEN,
          'PATH_OUTSIDE_ROOTS',
          { path },
        ]);
      }
    });

    it('are refused with 422 SOURCE_NOT_FOUND when missing and 422 NOT_A_REGULAR_FILE for a folder', async () => {
      const missing = join(root, 'missing.bin');
      expect(await refusal({ type: 'file', path: missing })).toEqual({
        status: HttpStatus.UNPROCESSABLE_ENTITY,
        code: 'SOURCE_NOT_FOUND',
        details: { path: missing },
      });
      const under = join(root, 'file.bin', 'below');
      expect((await refusal({ type: 'file', path: under })).code).toBe('SOURCE_NOT_FOUND');
      const folder = join(root, 'folder');
      expect(await refusal(pathToFileURL(folder).href)).toEqual({
        status: HttpStatus.UNPROCESSABLE_ENTITY,
        code: 'NOT_A_REGULAR_FILE',
        details: { path: folder },
      });
    });

    it.each([
      ['no object nor string', 42],
      ['an array', ['/data/file.bin']],
      ['null', null],
      ['an unsupported type', { type: 'ftp', path: '/x' }],
      ['no type', { path: '/x' }],
      ['unknown fields', { type: 'file', path: '/x', mode: 'fast' }],
      ['a path that is no string', { type: 'file', path: 7 }],
      ['an empty path', { type: 'file', path: '' }],
      ['a NUL in the path', { type: 'file', path: '/x\0y' }],
      ['a relative path', { type: 'file', path: 'data/file.bin' }],
      ['a string that is no URL', 'data/file.bin'],
      ['an unsupported URL scheme', 'ftp://example.com/file.bin'],
      ['a file URL of a remote host', 'file://example.com/file.bin'],
      ['a file URL with a query', 'file:///data/file.bin?x=1'],
      ['a file URL with a fragment', 'file:///data/file.bin#x'],
      ['a file URL with an encoded "/"', 'file:///data%2Ffile.bin'],
      ['a tab in the URL', 'file:///data/fi\tle.bin'],
      ['a space around the URL', ' file:///data/file.bin'],
    ])('are refused with 400 INVALID_SOURCE for %s', expectInvalidSource);
  });

  describe('remote sources', () => {
    it('are normalized and have no size yet', async () => {
      expect(await resolver.resolve('https://example.com/a%20b?x=1#part')).toEqual({
        ref: { type: 'http', url: 'https://example.com/a%20b?x=1' },
        size: null,
      });
      const http = {
        type: 'http',
        url: 'http://minio.internal/o',
        headers: { Authorization: 'Bearer t' },
      };
      expect(await resolver.resolve(http)).toEqual({ ref: http, size: null });
      expect(await resolver.resolve('s3://bucket/dir/a%20b')).toEqual({
        ref: { type: 's3', bucket: 'bucket', key: 'dir/a b' },
        size: null,
      });
      expect(
        await resolver.resolve({ type: 's3', bucket: 'bucket', key: 'k', versionId: 'v1' }),
      ).toEqual({
        ref: { type: 's3', bucket: 'bucket', key: 'k', versionId: 'v1' },
        size: null,
      });
    });

    it('are refused with 403 SOURCE_ADDRESS_FORBIDDEN for an internal address not in HASHQ_ALLOW_HOSTS', async () => {
      const internal = [
        'http://127.0.0.1/x',
        'http://169.254.169.254/latest',
        'http://[::1]/x',
        'http://10.2.0.1/x',
      ];
      for (const url of internal) {
        const { status, code } = await refusal(url);
        expect([status, code]).toEqual([HttpStatus.FORBIDDEN, 'SOURCE_ADDRESS_FORBIDDEN']);
      }
      expect((await resolver.resolve('http://10.1.2.3/x')).ref).toEqual({
        type: 'http',
        url: 'http://10.1.2.3/x',
      });
    });

    it.each([
      ['an http URL that is no URL', { type: 'http', url: 'http://' }],
      ['an http source of another scheme', { type: 'http', url: 'ftp://example.com/x' }],
      [
        'an http source with unknown fields',
        { type: 'http', url: 'https://example.com', method: 'POST' },
      ],
      [
        'a header with a newline',
        { type: 'http', url: 'https://example.com', headers: { 'x-a': 'b\r\nc' } },
      ],
      ['an s3 URL without a key', 's3://bucket'],
      ['an invalid bucket name', { type: 's3', bucket: 'B', key: 'k' }],
      ['an empty key', { type: 's3', bucket: 'bucket', key: '' }],
    ])('are refused with 400 INVALID_SOURCE for %s', expectInvalidSource);
  });
});
