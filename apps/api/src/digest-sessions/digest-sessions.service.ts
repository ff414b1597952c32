import type { Readable } from 'node:stream';

import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import { SealedStateError } from '@hashq/crypto';
import type { DigestValue } from '@hashq/jobs';
import { createHasher, findAlgorithm, type Hasher } from '@hashq/native';
import { HttpStatus, Inject, Injectable } from '@nestjs/common';

import { ApiError } from '../common/api-error';
import { isUuid } from '../jobs/cursor';
import {
  type CreateJobDto,
  MAX_ALGORITHMS,
  MAX_CUSTOMIZATION_HEX,
  MAX_OUTPUT_LENGTH,
} from '../jobs/dto/create-job.dto';
import { JobRequestValidator } from '../jobs/job-request.validator';
import {
  type DigestSessionOptions,
  type DigestSessionRow,
  DigestSessionsRepository,
  type SessionError,
} from './digest-sessions.repository';
import { HashPipeline } from './hash-pipeline';
import { BodyInterruptedError, consumeBody } from './request-body';
import { SessionHashers } from './session-hashers';
import { TurnGate } from './turn-gate';
import {
  CHECKSUM_MISMATCH_STATUS,
  isOffsetStream,
  parseByteCount,
  parseChecksum,
  parseMetadata,
} from './tus-headers';

/** The tus headers of a POST (creation). */
export interface CreateRequest {
  uploadLength?: string;
  uploadDeferLength?: string;
  uploadMetadata?: string;
}

/** The tus headers of a PATCH. */
export interface PatchRequest {
  contentType?: string;
  contentLength?: string;
  uploadOffset?: string;
  uploadLength?: string;
  uploadChecksum?: string;
}

export interface PatchResult {
  offset: number;
  expiresAt: Date;
  /** The session once this PATCH (or an earlier one) completed it. */
  finished?: DigestSessionRow;
}

interface ChunkChecksum {
  hasher: Hasher;
  algorithm: string;
  digest: Buffer;
}

const STATE_INVALID = 'STATE_INVALID' as const;

/**
 * Digest sessions over tus 1.0.0: a PATCH body streams through the native hashers (restored
 * from the states stored with the offset) as it arrives, and the new states are committed with
 * the new offset in one statement fenced on the old one, at the end of the PATCH and every
 * CHECKPOINT_BYTES within it. Nothing of a session lives in this process between requests.
 */
@Injectable()
export class DigestSessionsService {
  /** Creations and PATCHes that start in one event-loop turn; more wait for the next turns. */
  private readonly starts = new TurnGate(4);
  private readonly discardListeners: ((sessions: DigestSessionRow[]) => Promise<void>)[] = [];

  constructor(
    private readonly sessions: DigestSessionsRepository,
    private readonly validator: JobRequestValidator,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
  ) {}

  async create(tenantId: string, request: CreateRequest): Promise<DigestSessionRow> {
    await this.starts.enter();
    const length = this.creationLength(request);
    const { algorithms, options } = this.checkMetadata(parseMetadata(request.uploadMetadata));
    const hashers = SessionHashers.create(algorithms, options);
    const session = await this.sessions.insert({
      tenantId,
      algorithms,
      options,
      uploadMetadata: request.uploadMetadata?.trim() || null,
      uploadLength: length,
      states: hashers.serialize(),
      idleSeconds: this.config.digestSessionExpiresSeconds,
    });
    if (length !== 0) return session;
    return (
      (await this.sessions.finish(
        session,
        0,
        session.states ?? [],
        this.outcome(session, hashers, 0),
      )) ?? this.fencedOff(session.id)
    );
  }

  /**
   * The session, if it is the tenant's and has not expired (404 / 410 otherwise); another tenant's
   * is SESSION_NOT_FOUND exactly like a missing one. null: any tenant's (a session already checked).
   */
  async findLive(tenantId: string | null, id: string): Promise<DigestSessionRow> {
    const session = isUuid(id) ? await this.sessions.findById(id, tenantId) : null;
    if (!session) throw this.notFound(id);
    if (session.expired || session.status === 'expired') {
      throw new ApiError(HttpStatus.GONE, 'SESSION_EXPIRED', `digest session ${id} has expired`, {
        id,
        expiredAt: session.expiresAt.toISOString(),
      });
    }
    return session;
  }

  /**
   * `listener` is given the rows of sessions about to be deleted (DELETE) or to lose their digests
   * (expiry, see expire), as they are then, and that waits for it (the webhook deliverer
   * keeps the session.completed bodies not sent yet).
   */
  beforeDiscard(listener: (sessions: DigestSessionRow[]) => Promise<void>): void {
    this.discardListeners.push(listener);
  }

  async delete(tenantId: string, id: string): Promise<void> {
    const session = await this.findLive(tenantId, id);
    for (const listener of this.discardListeners) await listener([session]);
    if (!(await this.sessions.delete(id))) throw this.notFound(id); // deleted by another request meanwhile
  }

  /**
   * The cleanup: sessions past their expiry lose their states and digests and stay as 'expired'
   * (410) for `idleSeconds` more, then the row goes too (404). Ended ones are shown to the discard
   * listeners first (discardExpired). Returns how many of each.
   */
  async expire(idleSeconds: number): Promise<{ expired: number; deleted: number }> {
    const ended = await this.discardExpired();
    const swept = await this.sessions.sweepExpired(idleSeconds);
    return { expired: ended + swept.expired, deleted: swept.deleted };
  }

  /**
   * Ended sessions past their expiry lose their digests, `page` at a time, each page shown to the
   * discard listeners first; returns how many.
   */
  private async discardExpired(page = 500): Promise<number> {
    let expired = 0;
    for (;;) {
      const ended = await this.sessions.endedPastExpiry(page);
      if (ended.length === 0) return expired;
      for (const listener of this.discardListeners) await listener(ended);
      expired += await this.sessions.expireEnded(ended.map((session) => session.id));
      if (ended.length < page) return expired;
    }
  }

  async patch(
    tenantId: string,
    id: string,
    request: PatchRequest,
    body: Readable,
  ): Promise<PatchResult> {
    if (!isOffsetStream(request.contentType)) {
      throw new ApiError(
        HttpStatus.UNSUPPORTED_MEDIA_TYPE,
        'UNSUPPORTED_MEDIA_TYPE',
        'Content-Type must be application/offset+octet-stream',
        {
          received: request.contentType ?? null,
        },
      );
    }
    const offset = parseByteCount(request.uploadOffset, 'Upload-Offset', 'INVALID_UPLOAD_OFFSET');
    if (offset === undefined)
      throw ApiError.badRequest('INVALID_UPLOAD_OFFSET', 'Upload-Offset is required');
    const declaredLength = parseByteCount(
      request.uploadLength,
      'Upload-Length',
      'INVALID_UPLOAD_LENGTH',
    );
    const checksum = this.chunkChecksum(request.uploadChecksum);
    await this.starts.enter();
    const contentLength =
      request.contentLength === undefined ? undefined : Number(request.contentLength);

    // The session as this instance left it, when the PATCH continues from there: no read (the
    // commit's fence checks that the row is still as it was written).
    const cached = this.sessions.cached(tenantId, id, offset);
    const session = cached?.row ?? (await this.findLive(tenantId, id));
    if (session.error?.code === STATE_INVALID) throw this.stateInvalid(session.id, session.error);
    if (offset !== session.uploadOffset) throw this.conflict(id, offset, session.uploadOffset);
    const length = this.patchLength(session, declaredLength);
    if (session.status !== 'uploading') {
      // finished: an empty PATCH at the end gets the final answer again (one that was lost, say)
      if (contentLength === 0) return { offset, expiresAt: session.expiresAt, finished: session };
      throw this.tooLarge(offset + (contentLength ?? 1), offset);
    }
    const limit = length ?? this.config.digestSessionMaxBytes;
    if (contentLength !== undefined && offset + contentLength > limit) {
      throw this.tooLarge(offset + contentLength, limit);
    }
    return this.absorb(session, length, body, checksum, cached?.opened);
  }

  /**
   * Streams the body through the hashers (HashPipeline): the socket is paused while the hashers
   * are FEED_HIGH_BYTES behind or a checkpoint serializes, so memory stays at a few MiB whatever
   * the body.
   */
  private async absorb(
    session: DigestSessionRow,
    length: number | null,
    body: Readable,
    checksum: ChunkChecksum | undefined,
    opened: Buffer[] | undefined,
  ): Promise<PatchResult> {
    const limit = length ?? this.config.digestSessionMaxBytes;
    // what the row holds at `committed`: sealed (the fence of the next write) and opened
    const at = {
      offset: session.uploadOffset,
      sealed: session.states ?? [],
      opened: [] as Buffer[],
    };
    at.opened = opened ?? (await this.openStates(session));
    const hashers = SessionHashers.restore(session.algorithms, at.opened);
    const pipeline = new HashPipeline(
      checksum ? [hashers, checksum.hasher] : [hashers],
      session.uploadOffset,
    );
    let expiresAt = session.expiresAt;
    // A checkpoint within the body commits while the next bytes are read and hashed (the body
    // resumes once the states are serialized); the next commit, or the end, waits for it first.
    let committing: Promise<void> | undefined;
    let checkpointed = session.uploadOffset;
    const landed = async (): Promise<void> => {
      const commit = committing;
      committing = undefined;
      await commit;
    };
    const checkpoint = async (wait: boolean): Promise<void> => {
      await landed();
      await pipeline.drain();
      const states = hashers.serialize();
      const progress = {
        offset: pipeline.offset,
        length,
        states,
        idleSeconds: this.config.digestSessionExpiresSeconds,
      };
      checkpointed = progress.offset;
      const commit = this.fenced(session, at, (fence) =>
        this.sessions.advance(session, at.offset, fence, progress),
      ).then((written) => {
        Object.assign(at, {
          offset: progress.offset,
          sealed: written.states ?? [],
          opened: states,
        });
        expiresAt = written.expiresAt;
      });
      if (wait) return commit;
      commit.catch(() => undefined); // handled: its error is thrown by the next landed()
      committing = commit;
    };
    const committed = () => at.offset;
    // Never a checkpoint at the full length (only the end of the body may complete the session),
    // nor with Upload-Checksum (the body counts only once it is whole).
    const checkpointDue = (): boolean =>
      !checksum &&
      pipeline.offset - checkpointed >= this.config.checkpointBytes &&
      pipeline.offset < (length ?? Infinity);

    try {
      await consumeBody(body, (chunk) => {
        if (pipeline.offset + chunk.length > limit)
          throw this.tooLarge(pipeline.offset + chunk.length, limit);
        const waiting = pipeline.write(chunk);
        return checkpointDue() ? Promise.resolve(waiting).then(() => checkpoint(false)) : waiting;
      }).catch(async (err: unknown) => {
        if (!(err instanceof BodyInterruptedError)) throw err;
        if (!checksum) await checkpoint(true).catch(() => undefined); // the client is gone: keep what arrived
        throw new ApiError(
          HttpStatus.BAD_REQUEST,
          'UPLOAD_INTERRUPTED',
          'the request body ended early',
          {
            uploadOffset: committed(),
          },
        );
      });
      await pipeline.drain();
      if (checksum) this.verifyChecksum(checksum);
      await landed();
      if (length !== null && pipeline.offset === length) {
        const outcome = this.outcome(session, hashers, length);
        const finished = await this.fenced(session, at, (fence) =>
          this.sessions.finish(session, at.offset, fence, outcome),
        );
        return { offset: length, expiresAt: finished.expiresAt, finished };
      }
      await checkpoint(true);
      return { offset: pipeline.offset, expiresAt };
    } finally {
      await committing?.catch(() => undefined); // an answer tells the offset as committed
      void pipeline.release();
    }
  }

  /**
   * One fenced write (`write`, given the sealed states the row holds at `at.offset`). Fenced off,
   * the row is read: moved on, ended or expired, the writer learns it (409, 404, 410); still
   * uploading at `at.offset` with other states, they are opened (422 STATE_INVALID and the session
   * ends failed when they do not open) and, when they hold what the writer started from (sealed
   * again, by the migration say), the write is made once more over them.
   */
  private async fenced(
    session: DigestSessionRow,
    at: { offset: number; sealed: Buffer[]; opened: Buffer[] },
    write: (fence: Buffer[]) => Promise<DigestSessionRow | null>,
  ): Promise<DigestSessionRow> {
    const written = await write(at.sealed);
    if (written) return written;
    this.sessions.forget(session.id);
    const now = await this.findLive(session.tenantId, session.id);
    if (now.uploadOffset === at.offset && now.status === 'uploading' && now.states) {
      const opened = await this.openStates(now);
      if (opened.every((state, i) => state.equals(at.opened[i]))) {
        const again = await write(now.states);
        if (again) return again;
      }
    }
    return this.fencedOff(session.id);
  }

  /**
   * The stored states, opened. One that does not open (altered, copied from another session or
   * offset, sealed with a key no longer held) ends the session 'failed' with STATE_INVALID: hashing
   * on from it would give a wrong digest.
   */
  private async openStates(session: DigestSessionRow): Promise<Buffer[]> {
    try {
      return this.sessions.openStates(session);
    } catch (err) {
      if (!(err instanceof SealedStateError)) throw err;
      const error = {
        code: STATE_INVALID,
        message: err.message,
        details: { uploadOffset: session.uploadOffset },
      };
      const idleSeconds = this.config.digestSessionExpiresSeconds;
      if (!(await this.sessions.fail(session.id, session.uploadOffset, error, idleSeconds))) {
        return this.fencedOff(session.id);
      }
      throw this.stateInvalid(session.id, error);
    }
  }

  /** Digests of the whole upload, with the expected ones compared as for jobs (DIGEST_MISMATCH). */
  private outcome(session: DigestSessionRow, hashers: SessionHashers, length: number) {
    const digests = hashers.digests();
    const error = mismatchError(digests, session.options.expected);
    return {
      offset: length,
      length,
      status: error ? ('failed' as const) : ('succeeded' as const),
      digests,
      error,
      idleSeconds: this.config.digestSessionExpiresSeconds,
    };
  }

  /** The session moved (another PATCH committed first), ended or expired since it was read. */
  private async fencedOff(id: string): Promise<never> {
    const now = await this.findLive(null, id);
    throw this.conflict(id, undefined, now.uploadOffset);
  }

  private stateInvalid(id: string, error: SessionError): ApiError {
    const message = `digest session ${id} ended failed: its stored hash state does not open (${error.message})`;
    return new ApiError(HttpStatus.UNPROCESSABLE_ENTITY, STATE_INVALID, message, error.details);
  }

  private notFound(id: string): ApiError {
    return new ApiError(
      HttpStatus.NOT_FOUND,
      'SESSION_NOT_FOUND',
      `no digest session with id ${id}`,
      { id },
    );
  }

  private conflict(id: string, offset: number | undefined, current: number): ApiError {
    return new ApiError(
      HttpStatus.CONFLICT,
      'OFFSET_MISMATCH',
      `digest session ${id} is at offset ${current}`,
      {
        uploadOffset: current,
        ...(offset === undefined ? {} : { received: offset }),
      },
    );
  }

  private tooLarge(size: number, limit: number): ApiError {
    const message = `the upload would reach ${size} bytes; its limit is ${limit}`;
    return new ApiError(HttpStatus.PAYLOAD_TOO_LARGE, 'UPLOAD_TOO_LARGE', message, { size, limit });
  }

  /** POST: exactly one of Upload-Length and Upload-Defer-Length: 1; null = deferred. */
  private creationLength(request: CreateRequest): number | null {
    const length = parseByteCount(request.uploadLength, 'Upload-Length', 'INVALID_UPLOAD_LENGTH');
    const deferred = request.uploadDeferLength !== undefined;
    if (deferred && (request.uploadDeferLength !== '1' || length !== undefined)) {
      throw ApiError.badRequest(
        'INVALID_UPLOAD_LENGTH',
        'Upload-Defer-Length must be 1, and comes without Upload-Length',
      );
    }
    if (length === undefined && !deferred) {
      throw ApiError.badRequest(
        'INVALID_UPLOAD_LENGTH',
        'Upload-Length or Upload-Defer-Length: 1 is required',
      );
    }
    if (length !== undefined && length > this.config.digestSessionMaxBytes) {
      throw this.tooLarge(length, this.config.digestSessionMaxBytes);
    }
    return length ?? null;
  }

  /** PATCH: a deferred length may be declared once; a known one may only be repeated. */
  private patchLength(session: DigestSessionRow, declared: number | undefined): number | null {
    if (declared === undefined || declared === session.uploadLength) return session.uploadLength;
    if (session.uploadLength !== null || declared < session.uploadOffset) {
      throw ApiError.badRequest(
        'INVALID_UPLOAD_LENGTH',
        `Upload-Length ${declared} contradicts the session`,
        {
          uploadLength: session.uploadLength,
          uploadOffset: session.uploadOffset,
        },
      );
    }
    if (declared > this.config.digestSessionMaxBytes)
      throw this.tooLarge(declared, this.config.digestSessionMaxBytes);
    return declared;
  }

  private chunkChecksum(header: string | undefined): ChunkChecksum | undefined {
    const parsed = parseChecksum(header);
    if (!parsed) return undefined;
    const info = findAlgorithm(parsed.algorithm);
    if (!info) {
      const message = `Upload-Checksum algorithm ${parsed.algorithm} is not supported`;
      throw ApiError.badRequest('CHECKSUM_ALGORITHM_NOT_SUPPORTED', message, {
        algorithm: parsed.algorithm,
      });
    }
    return { hasher: createHasher(info.name), algorithm: info.name, digest: parsed.digest };
  }

  private verifyChecksum(checksum: ChunkChecksum): void {
    const actual = checksum.hasher.digest();
    if (actual.equals(checksum.digest)) return;
    throw new ApiError(
      CHECKSUM_MISMATCH_STATUS,
      'CHECKSUM_MISMATCH',
      `the body's ${checksum.algorithm} differs from Upload-Checksum`,
      {
        algorithm: checksum.algorithm,
        expected: checksum.digest.toString('base64'),
        actual: actual.toString('base64'),
      },
    );
  }

  /**
   * The hashq keys of Upload-Metadata: `algorithms` (comma-separated names), `outputLength`,
   * `customization` (hex) and `expected-<algorithm>` (hex); checked as a job's fields are.
   * Other keys (a file name, a type) are kept as they came and returned by HEAD.
   */
  private checkMetadata(metadata: Map<string, Buffer>): {
    algorithms: string[];
    options: DigestSessionOptions;
  } {
    const text = (key: string): string | undefined => metadata.get(key)?.toString('utf8').trim();
    const invalid = (message: string, details?: unknown) =>
      ApiError.badRequest('INVALID_UPLOAD_METADATA', message, details);
    const names = (text('algorithms') ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name.length > 0);
    if (names.length === 0 || names.length > MAX_ALGORITHMS) {
      throw invalid(
        `Upload-Metadata must carry algorithms: 1 to ${MAX_ALGORITHMS} comma-separated names, base64-encoded`,
      );
    }
    const outputLength = text('outputLength');
    if (
      outputLength !== undefined &&
      (!/^\d{1,5}$/.test(outputLength) || +outputLength < 1 || +outputLength > MAX_OUTPUT_LENGTH)
    ) {
      throw invalid(`outputLength must be 1 to ${MAX_OUTPUT_LENGTH}`, { outputLength });
    }
    const customization = text('customization');
    if (customization !== undefined && !/^(?:[0-9a-fA-F]{2})*$/.test(customization)) {
      throw invalid('customization must be hex');
    }
    if (customization !== undefined && customization.length > MAX_CUSTOMIZATION_HEX) {
      throw invalid(`customization is limited to ${MAX_CUSTOMIZATION_HEX} hex digits`);
    }
    const expected = [...metadata.keys()].filter((key) => key.startsWith('expected-'));
    const dto = {
      algorithms: names,
      outputLength: outputLength === undefined ? undefined : Number(outputLength),
      customization,
      expected:
        expected.length === 0
          ? undefined
          : Object.fromEntries(expected.map((key) => [key.slice('expected-'.length), text(key)])),
    } as CreateJobDto;
    const { algorithms, options } = this.validator.check(dto);
    return {
      algorithms,
      options: {
        outputLength: options.outputLength,
        customization: options.customization,
        expected: options.expected,
      },
    };
  }
}

function mismatchError(
  digests: Record<string, DigestValue>,
  expected: Record<string, string> | undefined,
): SessionError | null {
  const mismatches = Object.entries(expected ?? {})
    .filter(([algorithm, hex]) => digests[algorithm]?.hex !== hex)
    .map(([algorithm, hex]) => [algorithm, { expected: hex, actual: digests[algorithm]?.hex }]);
  if (mismatches.length === 0) return null;
  return {
    code: 'DIGEST_MISMATCH',
    message: `digest differs from the expected value for ${mismatches.map(([algorithm]) => algorithm).join(', ')}`,
    details: Object.fromEntries(mismatches),
  };
}
