import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', '**/src/generated/**', '**/coverage/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' },
    },
    rules: {
      'no-console': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      // Libs are used through their public entry only.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // Entry points a lib's package.json exports besides its root are listed here.
              group: [
                '@switchyard/*/*',
                '!@switchyard/db/sql',
                '!@switchyard/service/openapi',
                '!@switchyard/testing/mcp',
                '!@switchyard/ui/client',
                '!@switchyard/ui/styles.css',
              ],
              message: 'Import a lib from its package root.',
            },
            {
              group: ['**/libs/**', '**/apps/**'],
              message: 'Import workspace code by package name.',
            },
          ],
        },
      ],
    },
  },
  {
    // The domain kernel runs in browsers too: no Node, Redis, database or Nest imports.
    files: ['libs/domain/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                'node:*',
                'ioredis',
                'pg',
                'bullmq',
                '@prisma/*',
                '@nestjs/*',
                '@switchyard/*',
              ],
              message: 'libs/domain is browser-safe and depends on nothing of the suite.',
            },
          ],
        },
      ],
    },
  },
  {
    // Command-line entry points and tests may talk to the terminal.
    files: ['**/*.spec.ts', '**/cli.ts', '**/*-cli.ts', 'test/**', 'bench/**', 'deploy/**'],
    rules: { 'no-console': 'off' },
  },
  prettier,
);
