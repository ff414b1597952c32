export * from './config';
export * from './config.module';
export * from './logger';
