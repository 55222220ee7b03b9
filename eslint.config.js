// ESLint keeps the shape docs/architecture.md describes: layers (lint/layers.mjs), no import cycles, short functions
// and files. Formatting is Prettier's (npm run lint runs both).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { downwardOnly } from './lint/layer-rule.mjs';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'reports/**',
      'bench/out/**',
      '.stryker-tmp/**',
      'test/e2e/project/**',
      '**/.adcp-corpus/**',
      '.vitest-adcp/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,cts,mts,js,mjs,cjs}'],
    plugins: { 'import-x': importX, layers: { rules: { 'downward-only': downwardOnly } } },
    settings: {
      // import-x reads each imported file to follow cycles: it must parse TypeScript and resolve `./x.js` to `x.ts`.
      'import-x/extensions': ['.ts', '.cts', '.mts', '.js', '.cjs', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.cts', '.mts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.test.json' })],
    },
    languageOptions: { globals: { ...globals.node } },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // TypeScript checks names itself (typescript-eslint's advice); JS files get Node's globals above.
      'no-undef': 'off',
      // Control characters are what the redaction, output fencing and header parsers look for on purpose.
      'no-control-regex': 'off',
      // Declaration merging (the matchers' types on Vitest's and Jest's interfaces) needs empty interfaces and `namespace jest`.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'always' }],
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Tests, benches and fixture agents read hostile and untyped JSON on purpose, and CommonJS files require.
    files: ['test/**', 'bench/**', 'fixtures/**', 'scripts/**', '**/*.cts', '**/*.cjs'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['src/**/*.{ts,cts,mts}'],
    rules: {
      'layers/downward-only': 'error',
      complexity: ['error', 20],
      'max-lines': ['error', { max: 500, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }],
    },
  },
);
