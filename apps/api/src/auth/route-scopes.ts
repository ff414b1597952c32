import type { INestApplication } from '@nestjs/common';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer, Reflector } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';

import { FALLBACK_SCOPE, OPEN_ACCESS_METADATA } from './auth.guard';
import { PUBLIC_METADATA, type Scope, SCOPE_METADATA } from './principal';

/** What one route needs: a scope, nothing (public), or an admin key unless its endpoint is open. */
export interface RouteAccess {
  method: string;
  /** Express-style, e.g. /v1/jobs/:id */
  path: string;
  scope: Scope | null;
  /** true when no @RequireScope names it (the guard then asks for FALLBACK_SCOPE). */
  implicit: boolean;
  openWhen?: 'metrics' | 'docs';
}

const asList = (value: string | string[] | undefined): string[] =>
  value === undefined ? [''] : Array.isArray(value) ? value : [value];

const join = (...parts: string[]): string =>
  `/${parts
    .flatMap((part) => part.split('/'))
    .filter(Boolean)
    .join('/')}`;

/** Every route of the app's controllers with the access the guard will ask (from their metadata). */
export function routeAccess(app: INestApplication): RouteAccess[] {
  const reflector = app.get(Reflector);
  const routes: RouteAccess[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const type = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (!type) continue;
      const prefixes = asList(Reflect.getMetadata(PATH_METADATA, type) as string | string[]);
      for (const name of Object.getOwnPropertyNames(type.prototype)) {
        const handler = (type.prototype as Record<string, unknown>)[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        const targets = [handler, type];
        const isPublic = reflector.getAllAndOverride<boolean>(PUBLIC_METADATA, targets) ?? false;
        const named = reflector.getAllAndOverride<Scope>(SCOPE_METADATA, targets);
        const openWhen = reflector.getAllAndOverride<'metrics' | 'docs'>(
          OPEN_ACCESS_METADATA,
          targets,
        );
        for (const prefix of prefixes) {
          for (const path of asList(Reflect.getMetadata(PATH_METADATA, handler) as string[])) {
            routes.push({
              method: RequestMethod[method],
              path: join(prefix, path),
              scope: isPublic ? null : (named ?? FALLBACK_SCOPE),
              implicit: !isPublic && named === undefined,
              ...(openWhen ? { openWhen } : {}),
            });
          }
        }
      }
    }
  }
  return routes;
}

/** Marks every operation of the OpenAPI document with the bearer scheme and its scope. */
export function documentScopes(document: OpenAPIObject, routes: RouteAccess[]): void {
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const operation = (
      document.paths[path] as Record<string, Record<string, unknown>> | undefined
    )?.[route.method.toLowerCase()];
    if (!operation) continue;
    if (route.scope === null) {
      operation.security = [];
      operation['x-hashq-scope'] = 'none';
      continue;
    }
    const open = route.openWhen
      ? ` (or none when HASHQ_${route.openWhen.toUpperCase()}_ACCESS=open)`
      : '';
    operation.security = [{ bearer: [] }];
    operation['x-hashq-scope'] = route.scope;
    const text = `Scope: ${route.scope}${open}.`;
    operation.description = operation.description
      ? `${text} ${String(operation.description)}`
      : text;
  }
}
