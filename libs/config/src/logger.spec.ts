import { Writable } from 'node:stream';
import { setImmediate as tick } from 'node:timers/promises';

import { createLogger } from './logger';

/** A destination that keeps what it is given, split into lines. */
class Sink extends Writable {
  private text = '';

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }

  lines(): string[] {
    return this.text.split('\n').filter((line) => line !== '');
  }
}

/** An ISO 8601 UTC time as Date#toISOString writes it (pino's isoTime). */
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const isIsoUtc = (text: string) => ISO_UTC.test(text) && new Date(text).toISOString() === text;

describe('createLogger', () => {
  it('writes one JSON object per line when the output is no terminal, with an ISO 8601 UTC time', async () => {
    const out = new Sink();
    const log = createLogger('api', 'info', { isTTY: false, destination: out });
    log.info({ jobId: 'j1', state: 'secret' }, 'hello');
    log.debug('below the level');
    await tick();
    expect(out.lines()).toHaveLength(1);
    const line = JSON.parse(out.lines()[0]) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 30,
      name: 'api',
      service: 'api',
      pid: process.pid,
      jobId: 'j1',
      msg: 'hello',
    });
    expect(line.state).toBe('[redacted]');
    expect(isIsoUtc(line.time as string)).toBe(true);
  });

  it('writes readable lines on a terminal: ISO 8601 UTC time, level, name, message, then the fields', async () => {
    const out = new Sink();
    const log = createLogger('worker', 'info', { isTTY: true, destination: out });
    log.warn({ jobId: 'j1', states: ['secret'] }, 'hello');
    await tick();
    const [first, ...fields] = out.lines();
    expect(() => JSON.parse(first)).toThrow();
    const match = /^\[(\S+)\] WARN \(worker\/(\d+)\): hello$/.exec(first);
    expect(match).not.toBeNull();
    expect(isIsoUtc(match![1])).toBe(true);
    expect(Number(match![2])).toBe(process.pid);
    expect(fields).toEqual(['    jobId: "j1"', '    states: "[redacted]"']);
    expect(out.lines().join('\n')).not.toContain('secret');
  });
});

describe('createLogger: secrets', () => {
  it('redacts credentials at the top level and two levels down', async () => {
    const out = new Sink();
    const log = createLogger('api', 'info', { isTTY: false, destination: out });
    log.info(
      {
        authorization: 'Bearer hq_a_s1',
        req: { headers: { authorization: 'Bearer hq_b_s2', cookie: 'c=s3' } },
        key: { apiKey: 'hq_c_s4', secret: 's5', token: 's6' },
      },
      'request',
    );
    await tick();
    const text = out.lines().join('\n');
    for (const secret of ['s1', 's2', 's3', 's4', 's5', 's6']) expect(text).not.toContain(secret);
    expect(JSON.parse(text)).toMatchObject({
      authorization: '[redacted]',
      req: { headers: { authorization: '[redacted]', cookie: '[redacted]' } },
      key: { apiKey: '[redacted]', secret: '[redacted]', token: '[redacted]' },
    });
  });

  it('redacts inside errors and child bindings, keeps the error whole and the logged object as it was', async () => {
    const out = new Sink();
    const log = createLogger('api', 'info', { isTTY: false, destination: out });
    const failure = Object.assign(new Error('query failed'), { code: '42P01', parameters: ['s7'] });
    class Inherited extends Error {}
    Object.defineProperty(Inherited.prototype, 'secret', { value: 's10', enumerable: true });
    const logged = { err: failure, job: { id: 'j1', lease: { token: 's8' } } };
    log.child({ tenant: { id: 't1', apiKey: 's9' } }).error(logged, 'failed');
    log.error(
      { err: new Inherited('inherited') },
      'pino copies inherited enumerable keys of errors',
    );
    await tick();
    const [text, second] = out.lines();
    for (const secret of ['s7', 's8', 's9', 's10']) expect(text + second).not.toContain(secret);
    expect(JSON.parse(text)).toMatchObject({
      err: { type: 'Error', message: 'query failed', code: '42P01', parameters: '[redacted]' },
      job: { id: 'j1', lease: { token: '[redacted]' } },
      tenant: { id: 't1', apiKey: '[redacted]' },
    });
    expect((JSON.parse(text) as { err: { stack: string } }).err.stack).toContain('query failed');
    expect(JSON.parse(second)).toMatchObject({
      err: { type: 'Inherited', message: 'inherited', secret: '[redacted]' },
    });
    expect(failure.parameters).toEqual(['s7']);
    expect(logged.job.lease.token).toBe('s8');
  });
});
