export * from './listing/directory-lister';
export * from './listing/glob';
export * from './listing/line-lister';
export * from './listing/lines';
export * from './listing/manifest';
export * from './listing/s3-lister';
export * from './listing/types';
