import { type JobOptions, S3_CHECKSUM_ALGORITHMS } from '@hashq/jobs';
import type { AlgorithmInfo } from '@hashq/native';
import { Injectable } from '@nestjs/common';

import { AlgorithmsService } from '../algorithms/algorithms.service';
import { ApiError } from '../common/api-error';
import type { CreateJobDto } from './dto/create-job.dto';

export interface CheckedRequest {
  /** Canonical names, in request order. */
  algorithms: string[];
  options: JobOptions;
}

/**
 * The checks of POST /v1/jobs that need the algorithm table: known and distinct names,
 * outputLength only for XOFs, customization only where the algorithm takes one, and expected
 * digests of the right algorithms and lengths. (Field types were checked by the DTO.)
 */
@Injectable()
export class JobRequestValidator {
  constructor(private readonly algorithms: AlgorithmsService) {}

  check(dto: CreateJobDto): CheckedRequest {
    const infos = this.resolveAlgorithms(dto.algorithms);
    const options: JobOptions = {};

    if (dto.outputLength !== undefined) {
      const fixed = infos.filter((info) => !info.xof).map((info) => info.name);
      if (fixed.length > 0) {
        throw ApiError.badRequest(
          'OUTPUT_LENGTH_NOT_SUPPORTED',
          `outputLength applies to XOFs only; not to ${fixed.join(', ')}`,
          { algorithms: fixed },
        );
      }
      options.outputLength = dto.outputLength;
    }
    if (dto.customization !== undefined) {
      const plain = infos.filter((info) => !info.customizable).map((info) => info.name);
      if (plain.length > 0) {
        throw ApiError.badRequest(
          'CUSTOMIZATION_NOT_SUPPORTED',
          `customization applies to customizable algorithms only; not to ${plain.join(', ')}`,
          { algorithms: plain },
        );
      }
      options.customization = dto.customization.toLowerCase();
    }
    if (dto.expected !== undefined) {
      options.expected = this.checkExpected(dto.expected, infos, dto.outputLength);
    }
    if (dto.priority !== undefined) options.priority = dto.priority;
    if (dto.s3Checksum === true) {
      this.checkS3Checksum(dto.source, infos);
      options.s3Checksum = true;
    }
    return { algorithms: infos.map((info) => info.name), options };
  }

  /** s3Checksum needs an S3 source and at least one algorithm S3 has a checksum form for. */
  private checkS3Checksum(source: unknown, infos: AlgorithmInfo[]): void {
    const s3 =
      typeof source === 'string'
        ? /^s3:\/\//i.test(source.trim())
        : typeof source === 'object' &&
          source !== null &&
          (source as { type?: unknown }).type === 's3';
    if (!s3) {
      throw ApiError.badRequest(
        'S3_CHECKSUM_NOT_SUPPORTED',
        's3Checksum applies to s3 sources only',
        { reason: 'source' },
      );
    }
    if (!infos.some((info) => S3_CHECKSUM_ALGORITHMS.includes(info.name))) {
      throw ApiError.badRequest(
        'S3_CHECKSUM_NOT_SUPPORTED',
        `s3Checksum needs one of ${S3_CHECKSUM_ALGORITHMS.join(', ')} among the algorithms`,
        { reason: 'algorithms', supported: S3_CHECKSUM_ALGORITHMS },
      );
    }
  }

  private resolveAlgorithms(names: string[]): AlgorithmInfo[] {
    const unknown = names.filter((name) => !this.algorithms.find(name));
    if (unknown.length > 0) {
      throw ApiError.badRequest(
        'UNKNOWN_ALGORITHM',
        `unknown algorithm(s): ${unknown.join(', ')}`,
        {
          unknown,
          known: this.algorithms.list().map((info) => info.name),
        },
      );
    }
    const infos = names.map((name) => this.algorithms.find(name) as AlgorithmInfo);
    const seen = new Set<string>();
    const duplicates = infos
      .filter((info) => seen.size === seen.add(info.name).size)
      .map((info) => info.name);
    if (duplicates.length > 0) {
      throw ApiError.badRequest(
        'DUPLICATE_ALGORITHM',
        `algorithm(s) listed twice: ${duplicates.join(', ')}`,
        {
          duplicates,
        },
      );
    }
    return infos;
  }

  private checkExpected(
    expected: Record<string, unknown>,
    infos: AlgorithmInfo[],
    outputLength: number | undefined,
  ): Record<string, string> {
    const checked: Record<string, string> = {};
    for (const [name, value] of Object.entries(expected)) {
      const info = infos.find((candidate) => candidate.name === this.algorithms.find(name)?.name);
      if (!info) {
        throw ApiError.badRequest(
          'INVALID_EXPECTED_DIGEST',
          `expected.${name} names an algorithm the job does not use`,
          {
            algorithm: name,
          },
        );
      }
      const bytes = info.xof && outputLength !== undefined ? outputLength : info.digestLength;
      if (
        typeof value !== 'string' ||
        !/^[0-9a-fA-F]*$/.test(value) ||
        value.length !== bytes * 2
      ) {
        throw ApiError.badRequest(
          'INVALID_EXPECTED_DIGEST',
          `expected.${name} must be ${bytes * 2} hex digits (${bytes} bytes)`,
          { algorithm: info.name, length: bytes },
        );
      }
      checked[info.name] = value.toLowerCase();
    }
    return checked;
  }
}
