import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import {
  type CanActivate,
  type ExecutionContext,
  HttpStatus,
  Inject,
  Injectable,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';

import { ApiError } from '../common/api-error';
import { bearerToken } from './api-key';
import { KeyVerifier } from './key-verifier';
import {
  LOCAL_PRINCIPAL,
  PUBLIC_METADATA,
  type RequestWithPrincipal,
  type Scope,
  SCOPE_METADATA,
} from './principal';
import { hasScopeIn } from './scopes';

export const WWW_AUTHENTICATE = 'Bearer realm="hashq"';
/** The scope of a route that names none: fail closed (test/auth-matrix finds such routes). */
export const FALLBACK_SCOPE: Scope = 'admin';

/** A route public when its endpoint's access setting (HASHQ_METRICS_ACCESS, ...) is open. */
export const OPEN_ACCESS_METADATA = 'hashq:open-access';
export const PublicWhenOpen = (endpoint: 'metrics' | 'docs') =>
  SetMetadata(OPEN_ACCESS_METADATA, endpoint);

/** 401: the same answer for no key, a malformed, unknown, wrong, expired or revoked one. */
export function unauthorized(res: Response): ApiError {
  res.setHeader('WWW-Authenticate', WWW_AUTHENTICATE);
  return new ApiError(
    HttpStatus.UNAUTHORIZED,
    'UNAUTHORIZED',
    'a valid API key is required: Authorization: Bearer hq_<id>_<secret>',
  );
}

/**
 * The global guard (APP_GUARD): every route needs a key with its scope (@RequireScope) unless it
 * is @PublicRoute. The key's Principal goes on request.principal for @CurrentPrincipal, the
 * throttler and the logs. With HASHQ_AUTH=off every request is LOCAL_PRINCIPAL.
 */
/** 403: the key is valid but lacks the route's scope. */
export function scopeMissing(scope: Scope): ApiError {
  const message = `this key lacks the scope ${scope} this route needs`;
  return new ApiError(HttpStatus.FORBIDDEN, 'SCOPE_MISSING', message, { required: scope });
}

@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: KeyVerifier,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    const request = context.switchToHttp().getRequest<Request & RequestWithPrincipal>();
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_METADATA, targets)) return true;
    const endpoint = this.reflector.getAllAndOverride<'metrics' | 'docs'>(
      OPEN_ACCESS_METADATA,
      targets,
    );
    if (endpoint && this.config.auth[endpoint] === 'open') return true;
    if (!this.config.auth.enabled) {
      request.principal = LOCAL_PRINCIPAL;
      return true;
    }
    const token = bearerToken(request.headers.authorization);
    const principal = token === null ? null : await this.verifier.verify(token);
    if (!principal) throw unauthorized(context.switchToHttp().getResponse<Response>());
    request.principal = principal;
    const scope =
      this.reflector.getAllAndOverride<Scope>(SCOPE_METADATA, targets) ?? FALLBACK_SCOPE;
    if (!hasScopeIn(principal.scopes, scope)) throw scopeMissing(scope);
    return true;
  }
}
