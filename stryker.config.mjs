// Mutation testing on demand: `npm run mutate` (never part of `npm test` or CI).
// A slice: `npm run mutate -- --mutate 'src/checks/**/*.ts'`.
// Reports: reports/mutation/index.html (and mutation.json), git-ignored.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts' },
  // The grading code: the engine, its runner roles and planning, the checks, the shared model, the compiler, the report.
  mutate: [
    'src/model/**/*.ts',
    'src/checks/**/*.ts',
    'src/plan/**/*.ts',
    'src/engine/**/*.ts',
    'src/roles/**/*.ts',
    'src/compile/**/*.ts',
    'src/report/**/*.ts',
  ],
  coverageAnalysis: 'perTest',
  // A 2-core machine: one Vitest per core, no more.
  concurrency: 2,
  reporters: ['progress', 'clear-text', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportTests: false, reportScoreTable: true },
  // Reported, never failing the command: the score is a guide to missing tests, not a gate.
  thresholds: { high: 80, low: 60, break: null },
  // Not needed to run the mutated tests: built output, benches, scratch folders.
  ignorePatterns: ['dist', 'bench', '.vitest-adcp', 'coverage', '*.tgz'],
  tempDirName: '.stryker-tmp',
};
