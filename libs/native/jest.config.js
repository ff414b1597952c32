/** Jest for @hashq/native (ts-jest, transpile only: `tsc -p .` type-checks). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }],
  },
  testTimeout: 180000,
  // Child processes and KAT runs share 2 cores with other work: keep it calm.
  maxWorkers: 2,
};
