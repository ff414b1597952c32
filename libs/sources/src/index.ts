export * from './source.js';
export * from './source-error.js';
export * from './file-roots.js';
export * from './file-source.js';
export * from './source-factory.js';
