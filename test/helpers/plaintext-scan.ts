/**
 * A search of a whole test database for plaintext input: the input is a 24-byte random marker
 * repeated, so every stretch of 24 input bytes is one of the marker's 24 rotations; pg_dump's
 * output is searched for each rotation as raw bytes, hex (how bytea is dumped) and base64.
 *
 *   const scan = new PlaintextScan();
 *   await writeFile(path, scan.input(24 * MiB));
 *   expect(scan.found(await scan.dump(databaseUrl))).toBe(false);
 *   expect(scan.found(plaintextState.toString('latin1'))).toBe(true);   // the search would see it
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

export class PlaintextScan {
  readonly marker = Buffer.from(`HQMK${randomBytes(10).toString('hex')}`, 'latin1');
  private readonly forms: string[];

  constructor() {
    const { marker } = this;
    const needles = [...marker.keys()].map((r) =>
      Buffer.concat([marker.subarray(r), marker.subarray(0, r)]),
    );
    const forms = ['latin1', 'hex', 'base64'] as const;
    this.forms = needles.flatMap((needle) => forms.map((form) => needle.toString(form)));
  }

  /** `bytes` of input: the marker repeated. */
  input(bytes: number): Buffer {
    return Buffer.alloc(bytes, this.marker);
  }

  /** Whether the text holds 24 consecutive input bytes, in any of the forms. */
  found(text: string): boolean {
    return this.forms.some((form) => text.includes(form));
  }

  /** pg_dump of the database (schema and data), as text. */
  async dump(databaseUrl: string): Promise<string> {
    const { stdout } = await run('pg_dump', ['--no-owner', databaseUrl], {
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  }
}
