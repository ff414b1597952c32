export * from './config';
export * from './config.module';
export * from './heap';
export * from './logger';
