/** One Jest run for every level: unit specs next to the code, integration and e2e suites in test/. */
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
};
/** The packages ai's client side loads that ship ES modules only. */
const ESM_ONLY_JS = '/node_modules/(ai|@ai-sdk/[^/]+|@workflow/[^/]+|@vercel/oidc|zod)/.+\\.m?js$';
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/{apps,libs,test}/**/*.{spec,int-spec,e2e-spec}.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', swc], [ESM_ONLY_JS]: ['@swc/jest', { ...swc, jsc: { target: 'es2022' } }] },
  // the AI SDK (`ai`, @ai-sdk/*) ships ES modules only (and loads zod's): Jest's CommonJS runtime gets them compiled
  transformIgnorePatterns: ['/node_modules/(?!(ai|@ai-sdk|@workflow|@vercel/oidc|zod)/)'],
  // the first pattern that matches wins: the client's before the libs' own
  moduleNameMapper: {
    // the installable client (libs/api-client), from its source as the other libs
    '^@parley/client$': '<rootDir>/libs/api-client/src',
    '^@parley/([a-z-]+)$': '<rootDir>/libs/$1/src',
    '^@parley/(platform|config)/(tracing|config|supported-node)$': '<rootDir>/libs/$1/src/$2',
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
  // a suite that leaks a handle must not hang CI; leaks still show as warnings
  forceExit: true,
};
