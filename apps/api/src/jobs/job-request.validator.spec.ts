import { createHash } from 'node:crypto';

import { HttpStatus } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { AlgorithmsModule } from '../algorithms/algorithms.module';
import { ApiError, type ErrorBody } from '../common/api-error';
import { CreateJobDto } from './dto/create-job.dto';
import { JobRequestValidator } from './job-request.validator';

/**
 * The checks of POST /v1/jobs that need the algorithm table, against the addon's real table.
 * Digest lengths come from Node's crypto (FIPS 180-4, FIPS 202, RFC 1321), not from the addon.
 */
describe('JobRequestValidator', () => {
  let validator: JobRequestValidator;
  const file = { type: 'file', path: '/data/a.bin' };
  const request = (fields: Partial<CreateJobDto>): CreateJobDto =>
    Object.assign(new CreateJobDto(), { source: file, algorithms: ['sha256'], ...fields });
  const hexOf = (algorithm: string) => createHash(algorithm).update('hashq').digest('hex');

  /** The status and the error body of the ApiError `check` throws: what the client gets. */
  const refusal = (dto: CreateJobDto): { status: number } & ErrorBody['error'] => {
    try {
      validator.check(dto);
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      const { error } = (err as ApiError).getResponse() as ErrorBody;
      expect(error.message).toEqual(expect.any(String));
      return { status: (err as ApiError).getStatus(), ...error };
    }
    throw new Error('the request was accepted');
  };

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [AlgorithmsModule],
      providers: [JobRequestValidator],
    }).compile();
    validator = moduleRef.get(JobRequestValidator);
  });

  describe('algorithms', () => {
    it('returns the canonical names in request order, whatever their letter case', () => {
      expect(validator.check(request({ algorithms: ['SHA3-256', 'md5', 'Sha256'] }))).toEqual({
        algorithms: ['sha3-256', 'md5', 'sha256'],
        options: {},
      });
    });

    it('refuses unknown names with UNKNOWN_ALGORITHM, listing them and the known ones', () => {
      const { status, code, details } = refusal(
        request({ algorithms: ['sha256', 'sha-256', 'blake9'] }),
      );
      expect([status, code]).toEqual([HttpStatus.BAD_REQUEST, 'UNKNOWN_ALGORITHM']);
      const { unknown, known } = details as { unknown: string[]; known: string[] };
      expect(unknown).toEqual(['sha-256', 'blake9']);
      expect(known).toEqual(
        expect.arrayContaining(['sha1', 'sha256', 'sha512', 'sha3-256', 'md5', 'shake128']),
      );
      expect(known).not.toContain('blake9');
    });

    it('refuses a name listed twice (also in another letter case) with DUPLICATE_ALGORITHM', () => {
      const { status, code, details } = refusal(
        request({ algorithms: ['sha256', 'md5', 'SHA256'] }),
      );
      expect([status, code]).toEqual([HttpStatus.BAD_REQUEST, 'DUPLICATE_ALGORITHM']);
      expect(details).toEqual({ duplicates: ['sha256'] });
    });
  });

  describe('outputLength', () => {
    it('is kept for XOFs', () => {
      const checked = validator.check(
        request({ algorithms: ['shake128', 'ascon-xof128'], outputLength: 100 }),
      );
      expect(checked.options).toEqual({ outputLength: 100 });
    });

    it('is refused with OUTPUT_LENGTH_NOT_SUPPORTED when a fixed-length algorithm is listed', () => {
      const dto = request({ algorithms: ['shake256', 'sha512', 'md5'], outputLength: 64 });
      const { status, code, details } = refusal(dto);
      expect([status, code, details]).toEqual([
        HttpStatus.BAD_REQUEST,
        'OUTPUT_LENGTH_NOT_SUPPORTED',
        { algorithms: ['sha512', 'md5'] },
      ]);
    });
  });

  describe('customization', () => {
    it('is kept, lower-cased, for a customizable algorithm', () => {
      const checked = validator.check(
        request({ algorithms: ['ascon-cxof128'], customization: 'CAFE01' }),
      );
      expect(checked.options).toEqual({ customization: 'cafe01' });
    });

    it('is refused with CUSTOMIZATION_NOT_SUPPORTED for the others (an XOF included)', () => {
      const { status, code, details } = refusal(
        request({ algorithms: ['ascon-cxof128', 'shake128', 'sha256'], customization: '00' }),
      );
      expect([status, code, details]).toEqual([
        HttpStatus.BAD_REQUEST,
        'CUSTOMIZATION_NOT_SUPPORTED',
        { algorithms: ['shake128', 'sha256'] },
      ]);
    });
  });

  describe('expected digests', () => {
    it('are kept under the canonical name, lower-cased, when their length is the digest length', () => {
      const sha256 = hexOf('sha256');
      const sha512 = hexOf('sha512');
      const checked = validator.check(
        request({
          algorithms: ['sha256', 'sha512'],
          expected: { SHA256: sha256.toUpperCase(), sha512 },
        }),
      );
      expect(checked.options).toEqual({ expected: { sha256, sha512 } });
    });

    it('of an XOF have outputLength bytes, or the default length without one', () => {
      const shake = createHash('shake128', { outputLength: 48 }).update('hashq').digest('hex');
      expect(
        validator.check(
          request({ algorithms: ['shake128'], outputLength: 48, expected: { shake128: shake } }),
        ).options,
      ).toEqual({ outputLength: 48, expected: { shake128: shake } });
      const { code, details } = refusal(
        request({ algorithms: ['shake128'], expected: { shake128: shake } }),
      );
      expect([code, details]).toEqual([
        'INVALID_EXPECTED_DIGEST',
        { algorithm: 'shake128', length: 32 },
      ]);
    });

    it('are refused with INVALID_EXPECTED_DIGEST when too short, too long, not hex or not a string', () => {
      const md5 = hexOf('md5');
      for (const bad of [md5.slice(2), `${md5}00`, `${md5.slice(1)}g`, 42, null]) {
        const { status, code, details } = refusal(
          request({ algorithms: ['md5'], expected: { md5: bad } }),
        );
        expect([status, code, details]).toEqual([
          HttpStatus.BAD_REQUEST,
          'INVALID_EXPECTED_DIGEST',
          { algorithm: 'md5', length: createHash('md5').digest().length },
        ]);
      }
    });

    it('are refused with INVALID_EXPECTED_DIGEST for an algorithm the job does not use', () => {
      const { status, code, details } = refusal(
        request({ algorithms: ['sha256'], expected: { sha1: hexOf('sha1') } }),
      );
      expect([status, code]).toEqual([HttpStatus.BAD_REQUEST, 'INVALID_EXPECTED_DIGEST']);
      expect(details).toEqual({ algorithm: 'sha1' });
      const unknown = refusal(request({ algorithms: ['sha256'], expected: { nope: '00' } }));
      expect([unknown.code, unknown.details]).toEqual([
        'INVALID_EXPECTED_DIGEST',
        { algorithm: 'nope' },
      ]);
    });
  });

  it('keeps priority as given', () => {
    expect(validator.check(request({ priority: 7 })).options).toEqual({ priority: 7 });
  });

  describe('s3Checksum', () => {
    it('is kept for an S3 source (object or URL) with an algorithm S3 has a checksum of', () => {
      const object = { type: 's3', bucket: 'bucket', key: 'k' };
      for (const source of [object, 's3://bucket/k', ' S3://bucket/k']) {
        const checked = validator.check(
          request({ source, algorithms: ['sha512', 'crc64nvme'], s3Checksum: true }),
        );
        expect(checked.options).toEqual({ s3Checksum: true });
      }
      expect(validator.check(request({ source: object, s3Checksum: false })).options).toEqual({});
    });

    it('is refused with S3_CHECKSUM_NOT_SUPPORTED for another source', () => {
      const http = { type: 'http', url: 'https://example.com' };
      for (const source of [file, 'file:///data/a.bin', 'https://example.com/a', http]) {
        const { status, code, details } = refusal(request({ source, s3Checksum: true }));
        expect([status, code]).toEqual([HttpStatus.BAD_REQUEST, 'S3_CHECKSUM_NOT_SUPPORTED']);
        expect(details).toEqual({ reason: 'source' });
      }
    });

    it('is refused with S3_CHECKSUM_NOT_SUPPORTED when no algorithm has an S3 checksum', () => {
      const { code, details } = refusal(
        request({ source: 's3://bucket/k', algorithms: ['sha512', 'sha3-256'], s3Checksum: true }),
      );
      expect(code).toBe('S3_CHECKSUM_NOT_SUPPORTED');
      // S3's checksum algorithms (AWS S3 User Guide, "Checking object integrity") and Content-MD5
      const supported = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256', 'md5'];
      expect(details).toEqual({ reason: 'algorithms', supported });
    });
  });
});
