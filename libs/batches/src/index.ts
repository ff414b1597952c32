export * from './listing/directory-lister';
export * from './listing/glob';
export * from './listing/s3-lister';
export * from './listing/types';
