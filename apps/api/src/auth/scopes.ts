import type { Scope } from './principal';

/** Whether `scopes` grant `scope` ('admin' grants every scope). */
export function hasScopeIn(scopes: readonly Scope[], scope: Scope): boolean {
  return scopes.includes('admin') || scopes.includes(scope);
}
