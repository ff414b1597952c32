export * from './listing/directory-lister';
export * from './listing/glob';
export * from './listing/types';
