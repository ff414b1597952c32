import { pino, type Logger } from 'pino';

/**
 * JSON lines on stdout. Job lines carry jobId and fence (child loggers); hash
 * states are never passed to a logger, and `state`/`states` keys are redacted
 * in case one ever is.
 */
export function createWorkerLogger(level: string): Logger {
  return pino({
    name: 'worker',
    level,
    base: { service: 'worker', pid: process.pid },
    redact: { paths: ['state', 'states', '*.state', '*.states'], censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
