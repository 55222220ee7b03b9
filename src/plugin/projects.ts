/**
 * Which Vitest project storyboard files run in (docs/architecture.md, "Where storyboard files run"): one the plugin
 * injects beside yours (the default), yours (`isolate: true`), or yours renamed into it (`--project vitest-adcp`).
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vitest/config';
import type { TestProject, VitestPluginContext } from 'vitest/node';
import { viteCacheDirOutsidePackage } from '../cache/location.js';
import { escapeRegExp, wildcardSource } from '../model/wildcard.js';
import { moduleCacheSettings } from './module-cache.js';
import type { PluginState } from './state.js';
import { storyboardWorkers } from './workers.js';

/** The storyboard project's name (`vitest-adcp:<name>` beside a named project of yours): what `--project` selects. */
const STORYBOARD_PROJECT = 'vitest-adcp';

type ConfigHook = Extract<NonNullable<Plugin['config']>, (...args: never[]) => unknown>;
/** Vite's config, as the `config` hook is given it (with Vitest's `test`). */
type UserConfig = Parameters<ConfigHook>[0];

/** The `config` hook: the user's config, before Vitest resolves it. */
export function configHook(state: PluginState, config: UserConfig): UserConfig | undefined {
  state.root = resolve(config.root ?? process.cwd());
  // The storyboard project carries this same instance: its config is made here (storyboardProject), not read.
  if (state.configSeen) return undefined;
  state.configSeen = true;
  const test = (config as { test?: { includeTaskLocation?: boolean; name?: string; projects?: unknown } }).test;
  const changes: { includeTaskLocation?: boolean; name?: string; server?: ServerDeps } = {};
  // Your project runs storyboards too under `isolate: true` and `--project vitest-adcp`: it loads the build natively.
  Object.assign(changes, ownBuildServer());
  // Test locations (and so IDE navigation) need includeTaskLocation.
  if (test?.includeTaskLocation === undefined) changes.includeTaskLocation = true;
  // `--project vitest-adcp` and not your project: Vitest filters the projects a config declares before any plugin
  // can inject one, so nothing would be left to run. Your project then takes the storyboard project's name and
  // runs the storyboards alone (configureVitest empties its own include), as the storyboard project would.
  if (state.options.isolate !== true && test?.projects === undefined && selectsStoryboardsOnly(test?.name)) {
    state.storyboardsOnly = true;
    changes.name = storyboardProjectName(test?.name);
  }
  // Outside any package (`npx vitest-adcp <url>` in a home directory), Vite's cache directory — Vitest keeps its
  // results there — would be `<cwd>/node_modules/.vite`, a `node_modules/` made where the run was started: it goes to
  // this user's cache directory of the OS instead, as ours does (cache/location.ts).
  const cacheDir = config.cacheDir === undefined ? viteCacheDirOutsidePackage(state.root) : undefined;
  return Object.keys(changes).length > 0 || cacheDir
    ? ({ test: changes, ...(cacheDir ? { cacheDir } : {}) } as UserConfig)
    : undefined;
}

/**
 * Where storyboard files run (see storyboardProject): a project of their own, without per-file isolation, unless the
 * user asked for isolation. Either way the user's own tests keep their settings. Undefined: `--project` leaves the
 * storyboard project out.
 */
export async function projectForStoryboards(
  state: PluginState,
  plugin: Plugin,
  context: VitestPluginContext,
): Promise<TestProject | undefined> {
  const { project: userProject, vitest, injectTestProjects } = context;
  const sequential = state.options.sequential === true;
  if (state.storyboardsOnly) return asStoryboardProject(userProject, sequential);
  if (state.options.isolate === true) return userProject;
  return storyboardProject(userProject, injectTestProjects, plugin, vitest, {
    sequential,
    moduleCache: moduleCacheSettings(state, context),
  });
}

/**
 * The project storyboard files run in by default: injected beside the user's
 * (inheriting its config — plugins, setup files, env — but not its test files
 * or global setup, which the user's project runs once), with `isolate: false`.
 *
 * Why: each storyboard file is a fresh module graph under Vitest's default
 * per-file isolation, so every file re-imports the engine, the MCP SDK and
 * ajv and recompiles the schemas before its first step answers — about 300 ms
 * a file, 5× the reference runner's wall time over the corpus. Without
 * isolation a worker loads all that once and runs file after file. Storyboard
 * runs keep no module-level state of their own (each file opens its own
 * StoryboardRun: context, captures, credentials, transport), and the caches
 * they share — compiled schemas, the corpus id list — are read-only
 * (test/e2e/shared-worker.test.ts proves it).
 */
async function storyboardProject(
  user: TestProject,
  inject: VitestPluginContext['injectTestProjects'],
  plugin: Plugin,
  vitest: VitestPluginContext['vitest'],
  { sequential, moduleCache }: { sequential: boolean; moduleCache: object },
): Promise<TestProject | undefined> {
  const name = storyboardProjectName(user.name);
  // Not `extends`: that would load the config file again and make a second, unconfigured instance of this plugin.
  // What storyboard files need from the user's project is its root, its env and its exclude; its global setup runs
  // once, in the user's project, before any test (its env changes reach these workers too).
  const [project] = await inject({
    plugins: [plugin],
    // Vitest 5 makes an inline project extend the config that declares it by default: the user's plugins (this one
    // included) would then apply twice, and a storyboard's compiled module would be compiled again as YAML. Vitest
    // 3.2 and 4 never extend unless asked, which `false` keeps (their types only know `string | true`).
    ...({ extends: false } as object),
    test: {
      name,
      root: user.config.root,
      include: [],
      exclude: [...user.config.exclude],
      env: { ...user.config.env },
      isolate: false,
      includeTaskLocation: true,
      ...ownBuildServer(),
      ...storyboardWorkers(sequential),
      // Vitest's module cache, keyed by ours (module-cache.ts).
      ...moduleCache,
    },
  } as Parameters<VitestPluginContext['injectTestProjects']>[0]);
  // Vitest leaves out an injected project its `--project` filter excludes (`--project '!vitest-adcp'`).
  if (!project && !vitest.matchesProjectFilter(name)) return undefined;
  if (!project) throw new Error('vitest-adcp: Vitest did not create the storyboard project');
  return project;
}

type ServerDeps = { deps: { external: RegExp[] } };

/**
 * This package's build as a module source Vitest must not transform: compiled storyboards import the runtime by its
 * absolute path (state.ts), and Vitest inlines every file outside node_modules — each module of the build transformed
 * by Vite in the main process and sent to the worker one request at a time. Installed from the registry, the build
 * is under node_modules and Node loads it; linked (`npm link`, a workspace, a `file:` dependency) or run from a
 * clone, it is not. Measured with the bin on one four-step storyboard from a clone: 3.9–4.7 s, 4.9–5.7 CPU-s and
 * 311–316 MB inlined; 2.2–2.4 s, 3.0–3.2 CPU-s and 194–196 MB loaded by Node (docs/architecture.md). Undefined from
 * source (`.ts`: Node cannot load it, Vite must transform it).
 */
export function ownBuildDeps(moduleUrl: string = import.meta.url): ServerDeps | undefined {
  const here = fileURLToPath(moduleUrl);
  if (!/\.[cm]?js$/.test(here)) return undefined;
  // dist/plugin/projects.js → dist/; Vitest matches patterns against `/`-separated absolute file paths.
  const build = resolve(dirname(here), '..').split('\\').join('/');
  return { deps: { external: [new RegExp(`^${escapeRegExp(build)}/`)] } };
}

const ownBuildServer = (): { server?: ServerDeps } => {
  const deps = ownBuildDeps();
  return deps ? { server: deps } : {};
};

function storyboardProjectName(userName: string | undefined): string {
  return userName ? `${STORYBOARD_PROJECT}:${userName}` : STORYBOARD_PROJECT;
}

/**
 * `--project` (Vitest's CLI flag) selects the storyboard project and not the project of the config: Vitest would drop
 * that project before any plugin runs, leaving none. Read from the command line because the config hook runs before
 * Vitest resolves its options; Vitest's own pattern rules (`*` wildcards, `!` negation, case-insensitive).
 */
function selectsStoryboardsOnly(userName: string | undefined): boolean {
  const filters: string[] = [];
  const argv = process.argv;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--project' && argv[i + 1] !== undefined) filters.push(argv[++i]!);
    else if (arg.startsWith('--project=')) filters.push(arg.slice('--project='.length));
  }
  if (filters.length === 0) return false;
  const matches = (name: string) => filters.some((filter) => projectPattern(filter).test(name));
  return matches(storyboardProjectName(userName)) && !matches(userName ?? '');
}

function projectPattern(filter: string): RegExp {
  const negated = filter.startsWith('!');
  const body = wildcardSource(negated ? filter.slice(1) : filter, '.*') + '$';
  return new RegExp('^' + (negated ? `(?!${body})` : body), 'i');
}

/**
 * `--project vitest-adcp` alone: your project (renamed by the config hook) becomes the storyboard project — your own
 * test files are filtered out, as the flag asks, and the storyboards run with the settings the storyboard project
 * would give them.
 */
function asStoryboardProject(project: TestProject, sequential: boolean): TestProject {
  const config = project.config as {
    include: string[];
    isolate: boolean;
    maxWorkers?: number;
    fileParallelism?: boolean;
  };
  config.include.length = 0;
  config.isolate = false;
  const settings = storyboardWorkers(sequential);
  if (settings.maxWorkers !== undefined) config.maxWorkers = settings.maxWorkers;
  if (settings.fileParallelism !== undefined) config.fileParallelism = settings.fileParallelism;
  return project;
}
