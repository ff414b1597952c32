export * from './state-sealer';
