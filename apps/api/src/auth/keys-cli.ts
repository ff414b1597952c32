/**
 * `npm run keys -- <command>`: API keys from the command line, on DATABASE_URL (the first admin key
 * comes from here; the API cannot make one without a key).
 *
 *   create --tenant <id> --name <name> --scopes a,b [--expires <ISO time>] [--create-tenant]
 *   list [--tenant <id>]
 *   revoke <key id>
 *   local-key <file>     npm start: keep a working admin key of the default tenant in <file>
 */
import { readFileSync, writeFileSync } from 'node:fs';

import { pgSql } from '@hashq/bench';
import { loadConfig } from '@hashq/config';
import { DEFAULT_TENANT, TenantsRepository } from '@hashq/jobs';
import { Client } from 'pg';

import { parseKey, secretMatches } from './api-key';
import { ApiKeysService, type KeyView } from './api-keys.service';
import { KeysRepository } from './keys.repository';
import { LOCAL_PRINCIPAL, type Scope, SCOPES } from './principal';

const USAGE = `usage: npm run keys -- create --tenant <id> --name <name> --scopes ${SCOPES.join(',')} [--expires <ISO time>] [--create-tenant]
       npm run keys -- list [--tenant <id>]
       npm run keys -- revoke <key id>
       npm run keys -- local-key <file>`;

class UsageError extends Error {}

function options(args: string[]): { flags: Map<string, string | true>; rest: string[] } {
  const flags = new Map<string, string | true>();
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) rest.push(arg);
    else if (arg === '--create-tenant') flags.set(arg.slice(2), true);
    else if (i + 1 < args.length) flags.set(arg.slice(2), args[++i]);
    else throw new UsageError(`${arg} needs a value`);
  }
  return { flags, rest };
}

function text(flags: Map<string, string | true>, name: string): string | undefined {
  const value = flags.get(name);
  return typeof value === 'string' ? value : undefined;
}

function describe(key: KeyView): string {
  const state = key.revokedAt
    ? `revoked ${key.revokedAt}`
    : key.expiresAt
      ? `expires ${key.expiresAt}`
      : 'active';
  return `${key.id}  ${key.tenant}  ${key.scopes.join(',')}  ${state}  ${key.name}`;
}

/** A key the file holds that still works (not revoked, not expired), or null. */
async function workingKey(keys: KeysRepository, file: string): Promise<string | null> {
  let key: string;
  try {
    key = readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
  const parsed = parseKey(key);
  const stored = parsed && (await keys.findWithSecret(parsed.id));
  if (!parsed || !stored || stored.revokedAt) return null;
  if (stored.expiresAt && stored.expiresAt.getTime() <= Date.now()) return null;
  return secretMatches(parsed.id, parsed.secret, stored.secretHash) ? key : null;
}

async function run(
  args: string[],
  service: ApiKeysService,
  keys: KeysRepository,
  tenants: TenantsRepository,
) {
  const [command, ...rest] = args;
  const { flags, rest: positional } = options(rest);
  switch (command) {
    case 'create': {
      const tenant = text(flags, 'tenant') ?? DEFAULT_TENANT;
      const name = text(flags, 'name');
      const scopes = (text(flags, 'scopes') ?? '').split(',').filter(Boolean);
      const unknown = scopes.filter((scope) => !(SCOPES as readonly string[]).includes(scope));
      if (!name || scopes.length === 0 || unknown.length > 0) {
        throw new UsageError(
          unknown.length ? `unknown scope(s): ${unknown.join(', ')}` : 'needs --name and --scopes',
        );
      }
      if (flags.get('create-tenant') === true && !(await tenants.find(tenant))) {
        await service.createTenant({ id: tenant, name: tenant });
        console.error(`created tenant ${tenant}`);
      }
      const expires = text(flags, 'expires');
      const key = await service.create(LOCAL_PRINCIPAL, {
        tenantId: tenant,
        name,
        scopes: scopes as Scope[],
        expiresAt: expires === undefined ? undefined : new Date(expires),
      });
      console.error(`created key ${describe(key)}; it is shown this once:`);
      console.log(key.key);
      return;
    }
    case 'list':
      for (const key of await service.list(LOCAL_PRINCIPAL, text(flags, 'tenant')))
        console.log(describe(key));
      return;
    case 'revoke': {
      if (positional.length !== 1) throw new UsageError('revoke needs a key id');
      console.log(describe(await service.revoke(LOCAL_PRINCIPAL, positional[0])));
      return;
    }
    case 'local-key': {
      if (positional.length !== 1) throw new UsageError('local-key needs a file');
      const [file] = positional;
      if (await workingKey(keys, file)) return;
      const key = await service.create(LOCAL_PRINCIPAL, {
        name: 'local (npm start)',
        scopes: ['admin'],
      });
      writeFileSync(file, `${key.key}\n`, { mode: 0o600 });
      console.error(`made the admin key ${key.id} of the default tenant in ${file}`);
      return;
    }
    default:
      throw new UsageError(command ? `unknown command ${command}` : 'a command is needed');
  }
}

async function main(): Promise<void> {
  const config = loadConfig(process.env, { requireStateKeys: false });
  const client = new Client({ connectionString: config.databaseUrl });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${config.databaseSchema}"`);
    const sql = pgSql(client);
    const keys = new KeysRepository(sql);
    const tenants = new TenantsRepository(sql);
    await run(process.argv.slice(2), new ApiKeysService(keys, tenants), keys, tenants);
  } finally {
    await client.end();
  }
}

/** The message of an ApiError's body, else the error's own. */
function reason(err: unknown): string {
  const body = (err as { getResponse?: () => { error?: { message?: string } } }).getResponse?.();
  return body?.error?.message ?? (err as Error).message;
}

main().catch((err: unknown) => {
  console.error(err instanceof UsageError ? `${err.message}\n${USAGE}` : `keys: ${reason(err)}`);
  process.exit(err instanceof UsageError ? 2 : 1);
});
