import { DEFAULT_TENANT } from '@hashq/jobs';
import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';

/** What a key may do; a route names the one scope it needs (README: "Keys and scopes"). */
export const SCOPES = [
  'jobs:read',
  'jobs:write',
  'batches:read',
  'batches:write',
  'benchmarks:read',
  'benchmarks:write',
  'admin',
] as const;
export type Scope = (typeof SCOPES)[number];

/** The caller of a request, set on `request.principal` by the authentication guard. */
export interface Principal {
  tenantId: string;
  /** The key's id, or null for local use without keys (HASHQ_AUTH=off). */
  keyId: string | null;
  scopes: readonly Scope[];
}

/** The caller when authentication is off: the default tenant with every scope. */
export const LOCAL_PRINCIPAL: Principal = Object.freeze({
  tenantId: DEFAULT_TENANT,
  keyId: null,
  scopes: SCOPES,
});

export const SCOPE_METADATA = 'hashq:scope';
export const PUBLIC_METADATA = 'hashq:public';

/** The scope a route (or every route of a controller) needs. */
export const RequireScope = (scope: Scope) => SetMetadata(SCOPE_METADATA, scope);

/** A route open to anyone (health). */
export const PublicRoute = () => SetMetadata(PUBLIC_METADATA, true);

export interface RequestWithPrincipal {
  principal?: Principal;
}

export function principalOf(request: RequestWithPrincipal): Principal {
  return request.principal ?? LOCAL_PRINCIPAL;
}

/** The request's Principal as a handler parameter: `@CurrentPrincipal() caller: Principal`. */
export const CurrentPrincipal = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Principal =>
    principalOf(ctx.switchToHttp().getRequest<RequestWithPrincipal>()),
);
