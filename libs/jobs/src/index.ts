export * from './job-status';
export * from './job-options';
export * from './queue';
export * from './jobs.repository';
export * from './job-store.module';
export * from './metrics';
export * from './queue-reconciler';
export * from './attempts';
