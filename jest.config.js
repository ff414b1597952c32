// Service tests (apps/, libs/ except the native addon, test/). NestJS 12 ships as ES modules and
// Jest can only load those in its ESM mode, so test files are compiled by ts-jest to ESM and the
// suite runs under `node --experimental-vm-modules` (see "test:service" in package.json).
/** @type {import('jest').Config} */
module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts', '**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/libs/native/', '<rootDir>/dist/'],
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.data/'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'json', 'node'],
  moduleNameMapper: {
    '^@hashq/(batches|bench|config|crypto|database|jobs|sources)$':
      '<rootDir>/libs/$1/src/index.ts',
    '^@hashq/(batches|bench|config|crypto|database|jobs|sources)/(.*)$': '<rootDir>/libs/$1/src/$2',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.jest.json' }],
  },
  testTimeout: 60000,
};
