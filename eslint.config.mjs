import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', '**/src/generated/**', '**/coverage/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' },
      // Each file is checked with the tsconfig.json nearest to it, the one its package's
      // `typecheck` uses, so lint and tsc see the same program.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
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
                '!@switchyard/gateway-store/prices',
                '!@switchyard/observability/tracing',
                '!@switchyard/routing/testing',
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
    // Response bodies from supertest and fetch are `any` in tests: the no-unsafe-* rules would
    // flag every assertion on one (hundreds of findings), so they guard product code only.
    files: ['**/*.spec.ts', '**/*.spec.tsx', '**/*.fixture.ts', 'test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Command-line entry points and tests may talk to the terminal.
    files: ['**/*.spec.ts', '**/cli.ts', '**/*-cli.ts', 'test/**', 'bench/**', 'deploy/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // Plain JavaScript config files are in no tsconfig: they get the untyped rules only.
    files: ['**/*.{js,mjs,cjs}'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  prettier,
);
