import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  { ignores: ['dist/**', 'libs/*/dist/**', 'dist-*/**', 'node_modules/**', 'coverage/**', '**/*.js', '**/*.mjs', 'libs/api-client/src/schema.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'warn',
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'read config through @parley/config' }],
    },
  },
  {
    files: ['libs/config/**', 'test/**', 'bench/**', 'scripts/**', '**/*.spec.ts'],
    rules: { 'no-restricted-properties': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
);
