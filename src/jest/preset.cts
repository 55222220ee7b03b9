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
 * storyboards — one stub test file per selected storyboard, named like the corpus file, in `.adcp-corpus/` at the
 * project root (the stub names the corpus file, which is what the transformer compiles and what every location points
 * at). Jest never collects tests below node_modules, where the corpus is and where caches usually go; and it labels a
 * test file by its path relative to `rootDir`, so a stub in the temp directory read `../../tmp/…`. Below the root the
 * label reads `.adcp-corpus/universal/capability-discovery.storyboard.yaml`. The folder ignores itself (its own
 * `.gitignore` says `*`), so git never sees the stubs; the folder is also added to `roots`, so they are collected
 * when Jest's `rootDir` is not the preset's. With `adcp.start`, the agent is started before the run and stopped after
 * it by Jest's `globalSetup` / `globalTeardown` (start-agent.cts, stop-agent.cts; a config with its own global setup
 * replaces the preset's, as any Jest preset key: call ours from yours).
 */
import type { CorpusSelection } from '../storyboard/select.js' with { 'resolution-mode': 'import' };
import type { JestAdcpOptions } from './suite.js' with { 'resolution-mode': 'import' };

const { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs') as typeof import('node:fs');
const nodePath = require('node:path') as typeof import('node:path');
// Node's require of an ES module (Node ≥ 20.19 / 22.12).
const { selectCorpus } = require('../storyboard/select.js') as {
  selectCorpus: (root: string, selection: CorpusSelection) => string[];
};
const { complianceFromEnv, missingSchemas, resolveCorpus } = require('../corpus.js') as typeof import('../corpus.js');

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

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The folder of the corpus stubs, below the project root: Jest labels each stub by this path. */
const STUB_DIR = '.adcp-corpus';
/** The folder's own `.gitignore`: git never sees it or the stubs; its first line is how the preset knows the folder is its own. */
const STUB_GITIGNORE =
  '# vitest-adcp: Jest stub test files for the selected corpus storyboards, rewritten on every run. Never commit them.\n*\n';

/**
 * Removes the stub folder of an earlier run. A folder of that name the preset did not write is left alone, and is an
 * error when the preset needs the folder (`needed`).
 */
function clearStubs(dir: string, needed: boolean): void {
  if (!existsSync(dir)) return;
  let marker = '';
  try {
    marker = readFileSync(nodePath.join(dir, '.gitignore'), 'utf8');
  } catch {
    // No .gitignore: not the preset's folder.
  }
  if (!marker.startsWith(STUB_GITIGNORE.split('\n')[0]!)) {
    if (!needed) return;
    throw new Error(
      `vitest-adcp: ${dir} exists and was not written by vitest-adcp, which keeps the stub test files of corpus storyboards there for Jest (rewritten on every run). Rename or move that folder.`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
}

/**
 * One stub per selected corpus storyboard, in `<rootDir>/.adcp-corpus/` (the corpus path, `.yaml` → `.storyboard.yaml`);
 * the folder, or undefined when nothing is selected. Only this selection's stubs: the folder of an earlier run is
 * removed first, since a storyboard deselected since then must not run (the folder is below `<rootDir>`, which Jest
 * searches anyway).
 */
function corpusStubs(options: JestPresetOptions, rootDir: string): string | undefined {
  const selection: CorpusSelection = {
    storyboards: [...(options.compliance?.storyboards ?? []), ...list(process.env.ADCP_STORYBOARDS)],
    bundles: [...(options.compliance?.bundles ?? []), ...list(process.env.ADCP_BUNDLES)],
    tracks: [...(options.compliance?.tracks ?? []), ...list(process.env.ADCP_TRACKS)],
  };
  const selected = selection.storyboards!.length > 0 || selection.bundles!.length > 0 || selection.tracks!.length > 0;
  const dir = nodePath.join(rootDir, STUB_DIR);
  clearStubs(dir, selected);
  if (!selected) return undefined;
  const corpus = resolveCorpus(options.compliance?.version ?? complianceFromEnv(), rootDir);
  const unschema = missingSchemas(corpus, options.adcp?.schemasDir);
  if (unschema) throw unschema;
  const files = selectCorpus(corpus.root, selection);
  if (files.length === 0) return undefined;
  mkdirSync(dir, { recursive: true });
  writeFileSync(nodePath.join(dir, '.gitignore'), STUB_GITIGNORE);
  for (const file of files) {
    const rel = nodePath.relative(corpus.root, file).replace(/\.ya?ml$/, '');
    const stub = nodePath.join(dir, `${rel}.storyboard.yaml`);
    mkdirSync(nodePath.dirname(stub), { recursive: true });
    writeFileSync(stub, `# vitest-adcp corpus storyboard: ${file}\n`);
  }
  return dir;
}

function createJestPreset(options: JestPresetOptions = {}) {
  const rootDir = nodePath.resolve(options.rootDir ?? process.cwd());
  const defaults = jestDefaults(rootDir);
  const stubs = corpusStubs(options, rootDir);
  const compliance = options.compliance?.version;
  // `adcp.start`: Jest's own hooks around the whole run start and stop the agent (they read the same `adcp` options).
  const agentHooks = options.adcp?.start
    ? { globalSetup: require.resolve('./start-agent.cjs'), globalTeardown: require.resolve('./stop-agent.cjs') }
    : {};
  return {
    ...agentHooks,
    testEnvironment: require.resolve('./environment.cjs'),
    testEnvironmentOptions: { adcp: { ...options.adcp, ...(compliance ? { compliance } : {}) } },
    transform: {
      // Jest adds babel-jest for JS/TS only when a config has no `transform`; a preset's counts as one.
      '\\.[jt]sx?$': 'babel-jest',
      '\\.storyboard\\.ya?ml$': [
        require.resolve('./transformer.cjs'),
        { ...(options.strictKeys === false ? { strictKeys: false } : {}), ...(compliance ? { compliance } : {}) },
      ],
    },
    testMatch: [...defaults.testMatch, '**/*.storyboard.yaml', '**/*.storyboard.yml'],
    moduleFileExtensions: [...defaults.moduleFileExtensions, 'yaml', 'yml'],
    ...(stubs ? { roots: ['<rootDir>', stubs] } : {}),
  };
}

module.exports = { createJestPreset };
