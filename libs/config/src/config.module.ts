import { DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';

import { type Env, type HashqConfig, loadConfig } from './config';
import { createLogger } from './logger';

/** Injection token of the validated HashqConfig. */
export const HASHQ_CONFIG = Symbol('HASHQ_CONFIG');
/** Injection token of the app's pino Logger. */
export const HASHQ_LOGGER = Symbol('HASHQ_LOGGER');
/** Injection token of the app's service name (`name` below: api, worker). */
export const HASHQ_APP_NAME = Symbol('HASHQ_APP_NAME');

export interface ConfigModuleOptions {
  /** Values that take precedence over process.env (tests use their own database and prefix). */
  env?: Env;
  /** The app's logger; by default a pino logger named `name` at LOG_LEVEL. */
  logger?: Logger;
  /** Service name on every log line (api, worker). */
  name?: string;
}

/**
 * Validates the environment once and provides it (HASHQ_CONFIG), a logger (HASHQ_LOGGER) and the
 * service name (HASHQ_APP_NAME) to every module.
 */
@Global()
@Module({})
export class HashqConfigModule {
  static forRoot(options: ConfigModuleOptions = {}): DynamicModule {
    return {
      module: HashqConfigModule,
      providers: [
        { provide: HASHQ_CONFIG, useFactory: () => loadConfig({ ...process.env, ...options.env }) },
        { provide: HASHQ_APP_NAME, useValue: options.name ?? 'hashq' },
        {
          provide: HASHQ_LOGGER,
          inject: [HASHQ_CONFIG, HASHQ_APP_NAME],
          useFactory: (config: HashqConfig, name: string) =>
            options.logger ?? createLogger(name, config.logLevel),
        },
      ],
      exports: [HASHQ_CONFIG, HASHQ_LOGGER, HASHQ_APP_NAME],
    };
  }
}
