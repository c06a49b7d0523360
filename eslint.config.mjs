// Lint rules: typed checks everywhere; outside tests no function over 120 lines and no file over 500 (300 in
// workflows/, 250 for the task loop); a sandbox fence around workflows/ (no I/O inside workflow code). What each folder
// may import is checked apart: .dependency-cruiser.cjs.
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
    // Small functions and files: a phase per function, or a class with one method per phase (docs/CONVENTIONS.md),
    // and one concept per file, every line counted. Tests may hold longer tables and scenarios.
    files: ['**/*.ts'],
    ignores: ['test/**'],
    rules: {
      'max-lines-per-function': ['error', { max: 120 }],
      'max-lines': ['error', { max: 500, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // Workflow code is read as the algorithm it runs: smaller still.
    files: ['workflows/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }] },
  },
  {
    // The task loop reads like the algorithm on one screen; a new concern is a stage in workflows/stages/.
    files: ['workflows/agent-loop.ts'],
    rules: { 'max-lines': ['error', { max: 250, skipBlankLines: false, skipComments: false }] },
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
                '**/client/**',
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
