// Lint rules: typed checks everywhere, and a sandbox fence around workflows/ (no I/O inside workflow code).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = builtinModules.flatMap((m) => [m, `node:${m}`]);

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      '.tools/**',
      'data/**',
      'runs/**',
      'bench/results/**',
      'bin/**',
      'eslint.config.mjs',
      '.dependency-cruiser.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [...nodeBuiltins, 'playwright', 'playwright-core', 'sharp', 'openai'].map((name) => ({
            name,
            message: 'Workflow code must stay deterministic: no Node built-ins or I/O libraries in workflows/.',
            allowTypeImports: true,
          })),
          patterns: [
            {
              group: ['playwright/*', 'openai/*', 'sharp/*'],
              message: 'No I/O libraries in workflows/.',
              allowTypeImports: true,
            },
            {
              group: [
                '**/browser/**',
                '**/desktop/**',
                '**/activities/**',
                '**/worker/**',
                '**/cli/**',
                '**/api/**',
                '**/runtime/**',
              ],
              message: 'workflows/ may import only pure modules.',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
);
