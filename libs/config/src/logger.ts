import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';
import { build as prettyStream } from 'pino-pretty';

import { ConfigError, type LogLevel } from './config';

export interface LogOutput {
  /** Whether the output is a terminal (default: process.stdout.isTTY): pretty lines there, else JSON. */
  isTTY?: boolean;
  /** Where the lines go (default: stdout). */
  destination?: NodeJS.WritableStream;
}

/** The time of every line of every service, also in the pretty form: ISO 8601 UTC (pino's isoTime). */
const PRETTY_TIME = "UTC:yyyy-mm-dd'T'HH:MM:ss.l'Z'";

/**
 * Fields never written, at the top level or two levels down: hash states (a plaintext tail of the
 * input), credentials (an `Authorization` header, a cookie, an API key or its secret, a token),
 * and the parameters of a failed SQL query (TypeORM's QueryFailedError carries them: a request's
 * data, a state, a key's hash).
 */
const SECRET_FIELDS = [
  'state',
  'states',
  'authorization',
  'cookie',
  'apiKey',
  'secret',
  'token',
  'parameters',
];
const SECRET = new Set(SECRET_FIELDS);
const CENSOR = '[redacted]';

/**
 * `value` with every SECRET_FIELDS key at most `levels` below it censored. It runs before pino's
 * serializers and walks what they write: enumerable keys, inherited ones too (pino's err
 * serializer copies those). What it changes is copied with its prototype (an Error stays one);
 * the rest is shared. Our own walk, not pino's `redact`: its `*.field` paths visit every value of
 * every line (README, "Small jobs", "Log lines").
 */
function censored<T>(value: T, levels: number): T {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  const fields = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key in fields) {
    const field = fields[key];
    const next = SECRET.has(key) ? CENSOR : levels > 0 ? censored(field, levels - 1) : field;
    if (next === field) continue;
    copy ??= Array.isArray(value)
      ? [...value]
      : Object.create(Object.getPrototypeOf(value), Object.getOwnPropertyDescriptors(value));
    Object.defineProperty(copy, key, { value: next, enumerable: true, writable: true });
  }
  return (copy ?? value) as T;
}

/** A log line's fields, or a child logger's bindings, with SECRET_FIELDS censored two levels down. */
function redactSecrets<T extends object>(fields: T): T {
  return censored(fields, 2);
}

/**
 * `logger` whose children, and theirs, get censored bindings (pino applies `formatters.bindings`
 * to the root's own only). A child is created from its parent's prototype, so it inherits this
 * child().
 */
function withCensoredChildren(logger: Logger): Logger {
  const child = logger.child;
  logger.child = function (this: Logger, bindings, options) {
    return child.call(this, redactSecrets(bindings), options);
  } as Logger['child'];
  return logger;
}

/**
 * The log of a service: one JSON object per line, or readable lines (pino-pretty) on a terminal.
 * `name` (api, worker, …) is on every line; SECRET_FIELDS are replaced by "[redacted]" in case
 * one is ever logged. A line names what it is about in its own fields (requestId, jobId, …): no
 * async context (AsyncLocalStorage), which on Node 20 hooks every promise of the process (README,
 * "Small jobs", "No async context in the API").
 */
export function createLogger(name: string, level: LogLevel, output: LogOutput = {}): Logger {
  const isTTY = output.isTTY ?? Boolean(process.stdout.isTTY);
  const options = {
    name,
    level,
    base: { pid: process.pid, service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { log: redactSecrets }, // the bindings: withCensoredChildren
  };
  if (!isTTY)
    return withCensoredChildren(
      output.destination ? pino(options, output.destination) : pino(options),
    );
  const pretty = prettyStream({
    destination: output.destination ?? 1,
    sync: true,
    ...(output.destination && { colorize: false }), // colors on the real terminal only
    translateTime: PRETTY_TIME,
    ignore: 'service', // the name shows it
  });
  return withCensoredChildren(pino(options, pretty));
}

/**
 * Logs on stderr, in the same form, why a program stops before its logger exists (e.g. every
 * problem of an invalid configuration); the caller exits.
 */
export function logFatal(name: string, message: string, err: unknown): void {
  const log = createLogger(name, 'info', {
    isTTY: Boolean(process.stderr.isTTY),
    destination: process.stderr,
  });
  log.fatal(err instanceof ConfigError ? { problems: err.problems } : { err }, message);
}

/** Routes Nest's own log calls (bootstrap, exceptions) into pino. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  /** Nest passes the context (class name) last, and a stack before it for errors. */
  private write(
    level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace',
    message: unknown,
    rest: unknown[],
  ): void {
    const context =
      typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    const stack = rest.length > 1 && typeof rest[0] === 'string' ? rest[0] : undefined;
    if (message instanceof Error) {
      this.logger[level]({ context, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.logger[level]({ context, ...message });
    } else {
      this.logger[level]({ context, stack }, String(message));
    }
  }
}
