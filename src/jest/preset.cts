/**
 * `vitest-adcp/jest`: the Jest preset, as a function of options.
 *
 *   // jest.config.js
 *   module.exports = { preset: 'vitest-adcp/jest' };                       // env-configured
 *   module.exports = { ...require('vitest-adcp/jest').createJestPreset({ compliance: { storyboards: ['capability_discovery'] } }) };
 *
 * What it sets: the storyboard transformer, vitest-adcp's test environment (Jest's node environment plus the runtime),
 * Jest's default `testMatch` and `moduleFileExtensions` plus the storyboard files (a config that sets its own
 * `testMatch` replaces the preset's, as with any Jest preset: add `'**\/*.storyboard.yaml'` to it), and — for corpus
 * storyboards — one stub test file per selected storyboard in a directory outside the project, added to `roots`
 * (Jest never collects tests below node_modules, where the corpus is; the stub names the corpus file, which is what
 * the transformer compiles and what every location points at).
 */
import type { CorpusSelection } from '../plugin/select.js' with { 'resolution-mode': 'import' };
import type { JestAdcpOptions } from './suite.js' with { 'resolution-mode': 'import' };

const { createHash } = require('node:crypto') as typeof import('node:crypto');
const { mkdirSync, readdirSync, rmSync, writeFileSync } = require('node:fs') as typeof import('node:fs');
const { tmpdir } = require('node:os') as typeof import('node:os');
const nodePath = require('node:path') as typeof import('node:path');
// Node's require of an ES module (Node ≥ 20.19 / 22.12).
const { selectCorpus } = require('../plugin/select.js') as { selectCorpus: (root: string, selection: CorpusSelection) => string[] };
const { complianceFromEnv, resolveCorpus } = require('../corpus.js') as typeof import('../corpus.js');

export interface JestPresetOptions {
  /** The run configuration (agent URL, protocol, token, timeouts…); ADCP_* environment variables are the fallbacks. */
  adcp?: Omit<JestAdcpOptions, 'compliance'>;
  /**
   * Corpus storyboards to run, by id, bundle or track (their union, with their `requires_scenarios`), and the corpus
   * version or path. Env (comma-separated, for `preset: 'vitest-adcp/jest'`): ADCP_STORYBOARDS, ADCP_BUNDLES,
   * ADCP_TRACKS; ADCP_COMPLIANCE.
   */
  compliance?: CorpusSelection & { version?: string };
  /** Unknown storyboard keys and checks are load errors. @default true */
  strictKeys?: boolean;
  /** Project root (where @adcp/sdk resolves from). @default process.cwd() */
  rootDir?: string;
}

/** Jest's defaults (from the installed jest-config), so the preset adds to them instead of replacing them. */
function jestDefaults(rootDir: string): { testMatch: string[]; moduleFileExtensions: string[] } {
  try {
    const { createRequire } = require('node:module') as typeof import('node:module');
    const defaults = createRequire(nodePath.join(rootDir, 'package.json'))('jest-config').defaults;
    if (Array.isArray(defaults?.testMatch) && Array.isArray(defaults?.moduleFileExtensions)) return defaults;
  } catch {
    // jest-config not resolvable from the project: Jest 30's defaults.
  }
  return {
    testMatch: ['**/__tests__/**/*.?([mc])[jt]s?(x)', '**/?(*.)+(spec|test).?([mc])[jt]s?(x)'],
    moduleFileExtensions: ['js', 'mjs', 'cjs', 'jsx', 'ts', 'mts', 'cts', 'tsx', 'json', 'node'],
  };
}

const list = (value: string | undefined) => (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);

/** One stub per selected corpus storyboard, in a directory of its own per project: `[dir, files]`. */
function corpusStubs(options: JestPresetOptions, rootDir: string): string | undefined {
  const selection: CorpusSelection = {
    storyboards: [...(options.compliance?.storyboards ?? []), ...list(process.env.ADCP_STORYBOARDS)],
    bundles: [...(options.compliance?.bundles ?? []), ...list(process.env.ADCP_BUNDLES)],
    tracks: [...(options.compliance?.tracks ?? []), ...list(process.env.ADCP_TRACKS)],
  };
  if (!selection.storyboards!.length && !selection.bundles!.length && !selection.tracks!.length) return undefined;
  const corpus = resolveCorpus(options.compliance?.version ?? complianceFromEnv(), rootDir);
  const files = selectCorpus(corpus.root, selection);
  const dir = nodePath.join(tmpdir(), `vitest-adcp-jest-${createHash('sha256').update(rootDir).digest('hex').slice(0, 12)}`);
  // Only this selection's stubs: a storyboard deselected since the last run must not run.
  rmSync(dir, { recursive: true, force: true });
  for (const file of files) {
    const rel = nodePath.relative(corpus.root, file).replace(/\.ya?ml$/, '');
    const stub = nodePath.join(dir, `${rel}.storyboard.yaml`);
    mkdirSync(nodePath.dirname(stub), { recursive: true });
    writeFileSync(stub, `# vitest-adcp corpus storyboard: ${file}\n`);
  }
  return readdirSync(dir).length ? dir : undefined;
}

function createJestPreset(options: JestPresetOptions = {}) {
  const rootDir = nodePath.resolve(options.rootDir ?? process.cwd());
  const defaults = jestDefaults(rootDir);
  const stubs = corpusStubs(options, rootDir);
  const compliance = options.compliance?.version;
  return {
    testEnvironment: require.resolve('./environment.cjs'),
    testEnvironmentOptions: { adcp: { ...options.adcp, ...(compliance ? { compliance } : {}) } },
    transform: {
      // Jest adds babel-jest for JS/TS only when a config has no `transform`; a preset's counts as one.
      '\\.[jt]sx?$': 'babel-jest',
      '\\.storyboard\\.ya?ml$': [require.resolve('./transformer.cjs'), { ...(options.strictKeys === false ? { strictKeys: false } : {}), ...(compliance ? { compliance } : {}) }],
    },
    testMatch: [...defaults.testMatch, '**/*.storyboard.yaml', '**/*.storyboard.yml'],
    moduleFileExtensions: [...defaults.moduleFileExtensions, 'yaml', 'yml'],
    ...(stubs ? { roots: ['<rootDir>', stubs] } : {}),
  };
}

module.exports = { createJestPreset };
