import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import { algorithms } from '@hashq/native';
import {
  Controller,
  Delete,
  Get,
  Head,
  Headers,
  HttpCode,
  HttpStatus,
  Inject,
  Options,
  Param,
  Patch,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiGoneResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiPayloadTooLargeResponse,
  ApiPreconditionFailedResponse,
  ApiResponse,
  ApiTags,
  ApiUnprocessableEntityResponse,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';

import { CurrentPrincipal, type Principal, RequireScope } from '../auth/principal';
import { type DigestSessionResponse, toSessionResponse } from './digest-session.response';
import type { DigestSessionRow } from './digest-sessions.repository';
import { DigestSessionsService } from './digest-sessions.service';
import { hashqDigest, reprDigest, TUS_EXTENSIONS, TUS_VERSION } from './tus-headers';

const ERROR_SHAPE =
  'Body: { "error": { "code", "message", "details" } }; every answer carries Tus-Resumable: 1.0.0';
const TUS_HEADER = { name: 'Tus-Resumable', required: true, description: '1.0.0 (412 otherwise)' };

/** Upload-Expires is an HTTP date (RFC 9110). */
const httpDate = (date: Date): string => date.toUTCString();

/** The digests of a finished session: RFC 9530 Repr-Digest where a registered name exists, and all in Hashq-Digest. */
function setDigestHeaders(res: Response, session: DigestSessionRow | undefined): void {
  if (!session?.digests) return;
  const repr = reprDigest(session.digests);
  if (repr) res.setHeader('Repr-Digest', repr);
  res.setHeader('Hashq-Digest', hashqDigest(session.digests));
  res.setHeader('Hashq-Session-Status', session.status);
}

/**
 * tus 1.0.0 (core, creation, creation-defer-length, checksum, termination, expiration) plus a JSON
 * view. Scopes: a session is a job fed by the client, so jobs:write for what creates, feeds, probes
 * (HEAD: a tus client's step before PATCH) or ends one, jobs:read for the JSON view and discovery.
 */
@ApiTags('digest-sessions')
@Controller('v1/digest-sessions')
export class DigestSessionsController {
  private readonly checksumAlgorithms = algorithms()
    .map((info) => info.name)
    .join(',');

  constructor(
    private readonly sessions: DigestSessionsService,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
  ) {}

  @Options(['', ':id'])
  @RequireScope('jobs:read')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({
    description: 'Tus-Version, Tus-Extension, Tus-Checksum-Algorithm, Tus-Max-Size',
  })
  discover(@Res({ passthrough: true }) res: Response): void {
    res.setHeader('Tus-Version', TUS_VERSION);
    res.setHeader('Tus-Extension', TUS_EXTENSIONS.join(','));
    res.setHeader('Tus-Checksum-Algorithm', this.checksumAlgorithms);
    res.setHeader('Tus-Max-Size', String(this.config.digestSessionMaxBytes));
  }

  @Post()
  @RequireScope('jobs:write')
  @HttpCode(HttpStatus.CREATED)
  @ApiHeader(TUS_HEADER)
  @ApiHeader({
    name: 'Upload-Length',
    required: false,
    description: 'Total bytes (or Upload-Defer-Length: 1)',
  })
  @ApiHeader({
    name: 'Upload-Defer-Length',
    required: false,
    description: '1: the length comes with a later PATCH',
  })
  @ApiHeader({
    name: 'Upload-Metadata',
    required: true,
    description:
      'algorithms (base64 of "sha256,sha512"), optional outputLength, customization, expected-<algorithm> (hex)',
  })
  @ApiCreatedResponse({ description: 'Location: /v1/digest-sessions/<id>, Upload-Expires' })
  @ApiBadRequestResponse({
    description:
      'INVALID_UPLOAD_LENGTH, INVALID_UPLOAD_METADATA, UPLOAD_METADATA_TOO_LARGE, UNKNOWN_ALGORITHM, ' +
      'DUPLICATE_ALGORITHM, OUTPUT_LENGTH_NOT_SUPPORTED, CUSTOMIZATION_NOT_SUPPORTED, INVALID_EXPECTED_DIGEST. ' +
      ERROR_SHAPE,
  })
  @ApiPayloadTooLargeResponse({
    description: `UPLOAD_TOO_LARGE: over Tus-Max-Size. ${ERROR_SHAPE}`,
  })
  async create(
    @CurrentPrincipal() caller: Principal,
    @Headers() headers: Record<string, string | undefined>,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    const session = await this.sessions.create(caller.tenantId, {
      uploadLength: headers['upload-length'],
      uploadDeferLength: headers['upload-defer-length'],
      uploadMetadata: headers['upload-metadata'],
    });
    res.location(`/v1/digest-sessions/${session.id}`);
    res.setHeader('Upload-Expires', httpDate(session.expiresAt));
    setDigestHeaders(res, session);
  }

  // Before @Get: Express would answer HEAD with the GET route registered first.
  @Head(':id')
  @RequireScope('jobs:write')
  @ApiHeader(TUS_HEADER)
  @ApiOkResponse({
    description:
      'Upload-Offset, Upload-Length (or Upload-Defer-Length: 1), Upload-Expires, Upload-Metadata; ' +
      'digests once complete',
  })
  @ApiNotFoundResponse({ description: 'SESSION_NOT_FOUND (no body: HEAD)' })
  @ApiGoneResponse({ description: 'SESSION_EXPIRED (no body: HEAD)' })
  async head(
    @CurrentPrincipal() caller: Principal,
    @Param('id') id: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    const session = await this.sessions.findLive(caller.tenantId, id);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Upload-Offset', String(session.uploadOffset));
    if (session.uploadLength === null) res.setHeader('Upload-Defer-Length', '1');
    else res.setHeader('Upload-Length', String(session.uploadLength));
    res.setHeader('Upload-Expires', httpDate(session.expiresAt));
    if (session.uploadMetadata) res.setHeader('Upload-Metadata', session.uploadMetadata);
    setDigestHeaders(res, session);
  }

  @Get(':id')
  @RequireScope('jobs:read')
  @ApiOkResponse({
    description: "The session as JSON; digests once complete, in the shape of a job's",
  })
  @ApiNotFoundResponse({ description: `SESSION_NOT_FOUND. ${ERROR_SHAPE}` })
  @ApiGoneResponse({ description: `SESSION_EXPIRED. ${ERROR_SHAPE}` })
  async get(
    @CurrentPrincipal() caller: Principal,
    @Param('id') id: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DigestSessionResponse> {
    res.setHeader('Cache-Control', 'no-store');
    return toSessionResponse(await this.sessions.findLive(caller.tenantId, id));
  }

  @Patch(':id')
  @RequireScope('jobs:write')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiHeader(TUS_HEADER)
  @ApiHeader({
    name: 'Upload-Offset',
    required: true,
    description: "The session's offset (HEAD tells it)",
  })
  @ApiHeader({ name: 'Upload-Length', required: false, description: 'Declares a deferred length' })
  @ApiHeader({
    name: 'Upload-Checksum',
    required: false,
    description: '"<algorithm> <base64>" of this body (Tus-Checksum-Algorithm)',
  })
  @ApiNoContentResponse({
    description:
      'Upload-Offset, Upload-Expires; the last one also Repr-Digest, Hashq-Digest, Hashq-Session-Status',
  })
  @ApiBadRequestResponse({
    description:
      'INVALID_UPLOAD_OFFSET, INVALID_UPLOAD_LENGTH, INVALID_UPLOAD_CHECKSUM, CHECKSUM_ALGORITHM_NOT_SUPPORTED. ' +
      ERROR_SHAPE,
  })
  @ApiNotFoundResponse({ description: `SESSION_NOT_FOUND. ${ERROR_SHAPE}` })
  @ApiConflictResponse({
    description: `OFFSET_MISMATCH: not the session's Upload-Offset (or another PATCH committed first). ${ERROR_SHAPE}`,
  })
  @ApiGoneResponse({ description: `SESSION_EXPIRED. ${ERROR_SHAPE}` })
  @ApiPreconditionFailedResponse({ description: `UNSUPPORTED_TUS_VERSION. ${ERROR_SHAPE}` })
  @ApiPayloadTooLargeResponse({
    description: `UPLOAD_TOO_LARGE: past Upload-Length or Tus-Max-Size. ${ERROR_SHAPE}`,
  })
  @ApiUnsupportedMediaTypeResponse({
    description: `UNSUPPORTED_MEDIA_TYPE: not application/offset+octet-stream. ${ERROR_SHAPE}`,
  })
  @ApiUnprocessableEntityResponse({
    description: `STATE_INVALID: the stored hash state does not open; the session has ended failed. ${ERROR_SHAPE}`,
  })
  @ApiResponse({
    status: 460,
    description: `CHECKSUM_MISMATCH: the body counts for nothing. ${ERROR_SHAPE}`,
  })
  async patch(
    @CurrentPrincipal() caller: Principal,
    @Param('id') id: string,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    const header = (name: string): string | undefined => req.headers[name] as string | undefined;
    const result = await this.sessions.patch(
      caller.tenantId,
      id,
      {
        contentType: header('content-type'),
        contentLength: header('content-length'),
        uploadOffset: header('upload-offset'),
        uploadLength: header('upload-length'),
        uploadChecksum: header('upload-checksum'),
      },
      req,
    );
    res.setHeader('Upload-Offset', String(result.offset));
    res.setHeader('Upload-Expires', httpDate(result.expiresAt));
    setDigestHeaders(res, result.finished);
  }

  @Delete(':id')
  @RequireScope('jobs:write')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiHeader(TUS_HEADER)
  @ApiNoContentResponse({ description: 'The session and its states are gone (404 afterwards)' })
  @ApiNotFoundResponse({ description: `SESSION_NOT_FOUND. ${ERROR_SHAPE}` })
  @ApiGoneResponse({ description: `SESSION_EXPIRED. ${ERROR_SHAPE}` })
  delete(@CurrentPrincipal() caller: Principal, @Param('id') id: string): Promise<void> {
    return this.sessions.delete(caller.tenantId, id);
  }
}
