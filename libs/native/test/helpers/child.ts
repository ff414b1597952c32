/**
 * Runs in a child process (see spawn.ts): `node -r register.js child.ts
 * <command>`, JSON on stdin, JSON on stdout. The parent picks the code path
 * with HASHQ_NATIVE_IMPL.
 */
import * as lib from '../../lib';
import { runKats } from './library';

interface SerializeJob {
  algorithm: string;
  message: string; // hex
  options?: { customization?: string; outputLength?: number };
}

interface ResumeJob {
  state: string; // hex
  rest: string; // hex
  length?: number;
}

function implementations(): Record<string, string> {
  return Object.fromEntries(lib.algorithms().map((a) => [a.name, a.implementation]));
}

function run(command: string, input: unknown): unknown {
  switch (command) {
    case 'kat':
      return { implementations: implementations(), results: runKats() };
    case 'info':
      return { implementations: implementations() };
    case 'serialize':
      return (input as SerializeJob[]).map((job) => {
        const custom = job.options?.customization;
        const h = lib.createHasher(job.algorithm, {
          outputLength: job.options?.outputLength,
          customization: custom === undefined ? undefined : Buffer.from(custom, 'hex'),
        });
        return h.update(Buffer.from(job.message, 'hex')).serialize().toString('hex');
      });
    case 'resume':
      return (input as ResumeJob[]).map((job) =>
        lib.Hasher.restore(Buffer.from(job.state, 'hex'))
          .update(Buffer.from(job.rest, 'hex'))
          .digest({ length: job.length })
          .toString('hex'),
      );
    default:
      throw new Error(`unknown command ${command}`);
  }
}

const chunks: Buffer[] = [];
process.stdin.on('data', (c: Buffer) => chunks.push(c));
process.stdin.on('end', () => {
  const text = Buffer.concat(chunks).toString('utf8');
  const result = run(process.argv[2], text ? JSON.parse(text) : null);
  process.stdout.write(JSON.stringify(result));
});
