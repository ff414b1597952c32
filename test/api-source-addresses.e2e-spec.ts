/**
 * The SSRF guard at submission: a URL whose host is an address literal that is not global unicast
 * is refused with 403 SOURCE_ADDRESS_FORBIDDEN, in every form Node's URL parser accepts, and
 * creates no job. Only the API runs (no worker), so nothing connects anywhere; the address table
 * itself is tested in libs/sources/src/net-guard.spec.ts.
 */
import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';

/** [URL, the address the API names in the error details]. */
const FORBIDDEN: Array<[url: string, address: string]> = [
  ['http://198.18.0.1/x', '198.18.0.1'], // benchmarking 198.18.0.0/15
  ['http://3323068417/x', '198.18.0.1'], // decimal
  ['http://0306.022.0.1/x', '198.18.0.1'], // octal
  ['http://0xc6120001/x', '198.18.0.1'], // hexadecimal
  ['http://198.18.1/x', '198.18.0.1'], // short form
  ['http://198.18.0.1./x', '198.18.0.1'], // trailing dot
  ['http://224.0.0.251/x', '224.0.0.251'], // multicast
  ['http://4294967295/x', '255.255.255.255'], // limited broadcast
  ['http://240.1/x', '240.0.0.1'], // reserved 240.0.0.0/4
  ['http://192.0.2.1/x', '192.0.2.1'], // documentation
  ['http://[::127.0.0.1]/x', '::7f00:1'], // IPv4-compatible
  ['http://[::ffff:0:127.0.0.1]/x', '::ffff:0:7f00:1'], // SIIT
  ['http://[64:ff9b::169.254.169.254]/latest/meta-data/', '64:ff9b::a9fe:a9fe'], // NAT64 to the metadata address
  ['http://[64:ff9b::7f00:1]:8080/x', '64:ff9b::7f00:1'], // NAT64 to loopback
  ['http://[64:ff9b:1::808:808]/x', '64:ff9b:1::808:808'], // local-use NAT64 prefix
  ['http://[2002:7f00:1::1]/x', '2002:7f00:1::1'], // 6to4 of 127.0.0.1
  ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', '2001:0:4136:e378:8000:63bf:80ff:fffe'], // Teredo to 127.0.0.1
  ['http://[2001:db8::1]/x', '2001:db8::1'], // documentation
  ['http://[ff02::1]/x', 'ff02::1'], // multicast
  ['http://[fec0::1]/x', 'fec0::1'], // site-local, outside 2000::/3
];

describe('API: address literals in source URLs', () => {
  let env: TestEnv;
  let db: Client;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    env = await createTestEnv();
    db = new Client({ connectionString: env.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await db?.end();
    await env?.cleanup();
  });

  const api = async (allowHosts: string) => {
    const app = await createApiApp({ ...env, env: { ...env.env, HASHQ_ALLOW_HOSTS: allowHosts } });
    apps.push(app);
    return app;
  };
  const submit = (app: INestApplication, source: unknown) =>
    request(app.getHttpServer())
      .post('/v1/jobs')
      .send({ source, algorithms: ['sha256'] });
  const jobCount = async () => Number((await db.query('SELECT count(*) AS n FROM jobs')).rows[0].n);

  it('refuses each literal form that is not global unicast with 403, in both source forms; no job', async () => {
    const app = await api('');
    for (const [url, address] of FORBIDDEN) {
      for (const source of [url, { type: 'http', url }]) {
        const res = await submit(app, source);
        expect([url, res.status, res.body.error?.code, res.body.error?.details?.address]).toEqual([
          url,
          403,
          'SOURCE_ADDRESS_FORBIDDEN',
          address,
        ]);
      }
    }
    // The URL parser takes no zone id: a malformed source, not an address.
    const zoned = await submit(app, 'http://[fe80::1%25eth0]/x').expect(400);
    expect(zoned.body.error.code).toBe('INVALID_SOURCE');
    expect(await jobCount()).toBe(0);
  });

  it('HASHQ_ALLOW_HOSTS lets a listed range through; a copy embedded behind a translator stays refused', async () => {
    const app = await api('198.18.0.0/15, 64:ff9b:1::/48');
    await submit(app, 'http://3323068417/x').expect(202); // 198.18.0.1
    await submit(app, 'http://[::ffff:198.18.0.1]/x').expect(202); // IPv4-mapped: the same address
    await submit(app, 'http://[64:ff9b:1::808:808]/x').expect(202);
    for (const url of [
      'http://[64:ff9b::c612:1]/x',
      'http://[::ffff:0:c612:1]/x',
      'http://[2002:c612:1::]/x',
    ]) {
      const res = await submit(app, url);
      expect([url, res.status, res.body.error?.code]).toEqual([
        url,
        403,
        'SOURCE_ADDRESS_FORBIDDEN',
      ]);
    }
    expect(await jobCount()).toBe(3);
  });
});
