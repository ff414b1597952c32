import type { LoggerService } from '@nestjs/common';
import { pino, type Logger } from 'pino';

export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * JSON lines on stdout. Job lines carry jobId and fence (child loggers); hash
 * states are never passed to a logger, and `state`/`states` keys are redacted
 * in case one ever is.
 */
export function createRootLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'hashq-worker', pid: process.pid },
    redact: { paths: ['state', 'states', '*.state', '*.states'], censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

/** Nest's own messages through the same JSON logger. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
