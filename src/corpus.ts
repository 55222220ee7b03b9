/**
 * Finding the compliance corpus and the AdCP JSON Schemas. Both ship inside the
 * npm package `@adcp/sdk` (an optional peer dependency of ours):
 *   compliance/cache/<version>/   the storyboards, test kits, index.json
 *   dist/lib/schemas-data/<major.minor>/   the JSON Schemas
 * A user may instead point at any compliance tree on disk (ADCP_COMPLIANCE=/path).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import {
  DEFAULT_BASE_URL,
  fetchCorpus,
  fetchedCorpusRoot,
  fetchedFrom,
  type FetchCorpusOptions,
} from './corpus/fetch.js';
import { ConfigurationError } from './model/errors.js';
import { packageVersionAt } from './model/package-version.js';

export class CorpusNotFoundError extends ConfigurationError {}

export interface Corpus {
  /** Root of one compliance tree (holds `universal/`, `index.json`, `test-kits/`). */
  root: string;
  /** AdCP version of the tree, from its index.json (e.g. `3.0.6`). */
  version: string | undefined;
  /** The JSON Schema directory matching the version, when one is installed. */
  schemasDir: string | undefined;
  /**
   * Why this corpus, in words for the run's first line, `--version` and `--list`: `named`, `the version @adcp/sdk
   * 13.0.0 pins`, `fetched from https://…`, `the compliance tree at <path>`.
   */
  choice: string;
}

/** Root of the installed `@adcp/sdk` package, resolved from `fromDir` (the user's project). */
export function findSdkRoot(fromDir: string = process.cwd()): string | undefined {
  try {
    const require = createRequire(join(resolve(fromDir), 'noop.js'));
    return dirname(require.resolve('@adcp/sdk/package.json'));
  } catch {
    return undefined;
  }
}

/** Versions of the corpus shipped in the installed `@adcp/sdk` (e.g. `['3.0.6']`). */
export function installedCorpusVersions(sdkRoot: string): string[] {
  const cache = join(sdkRoot, 'compliance', 'cache');
  if (!existsSync(cache)) return [];
  return readdirSync(cache)
    .filter((name) => /^\d+\.\d+\.\d+(-[\w.]+)?$/.test(name) && existsSync(join(cache, name, 'index.json')))
    .sort(compareVersions);
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  const pb = b.split(/[.-]/).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    if (pa[i] === pb[i]) continue;
    if (pa[i] === undefined) return 1; // release sorts after its pre-releases
    if (pb[i] === undefined) return -1;
    return pa[i]! < pb[i]! ? -1 : 1;
  }
  return 0;
}

/** The AdCP version of the compliance tree at `root` (its index.json `adcp_version`), or undefined. */
export function corpusVersionOf(root: string): string | undefined {
  try {
    return JSON.parse(readFileSync(join(root, 'index.json'), 'utf8')).adcp_version;
  } catch {
    return undefined;
  }
}

/**
 * The JSON Schemas of a corpus's AdCP version — never another version's (a 3.1 corpus validated with 3.0 schemas
 * grades against the wrong artifacts): beside the tree in a published bundle (`adcp-<v>/compliance` and
 * `adcp-<v>/schemas`), else in the SDK that ships the tree (`<sdk>/compliance/cache/<v>` →
 * `<sdk>/dist/lib/schemas-data/<major.minor>`), else in the installed SDK.
 */
function schemasDirFor(sdkRoot: string | undefined, version: string | undefined, root?: string): string | undefined {
  if (root) {
    const bundled = join(root, '..', 'schemas');
    if (existsSync(join(bundled, 'manifest.json'))) return resolve(bundled);
    const shippedBy = /^(.*)[\\/]compliance[\\/]cache[\\/][^\\/]+$/.exec(resolve(root))?.[1];
    if (shippedBy && shippedBy !== sdkRoot) {
      const dir = schemasDataDir(shippedBy, version);
      if (dir) return dir;
    }
  }
  return sdkRoot ? schemasDataDir(sdkRoot, version) : undefined;
}

function schemasDataDir(sdkRoot: string, version: string | undefined): string | undefined {
  if (!version) return undefined;
  const [major, minor] = version.split('.');
  const dir = join(sdkRoot, 'dist', 'lib', 'schemas-data', `${major}.${minor}`);
  return existsSync(dir) ? dir : undefined;
}

/**
 * The corpus version the installed SDK grades with: its pinned `ADCP_VERSION` (the file at the package root, e.g.
 * `3.1.15` in @adcp/sdk 13), when that version is installed; else the newest installed release — a pre-release
 * (`3.1.0-beta.7`) only when it is all there is. A version the SDK ships beside its pin (13.0.0's package-only
 * `3.2.0`) is used only when named.
 */
function defaultCorpusVersion(
  sdkRoot: string,
  versions: readonly string[] = installedCorpusVersions(sdkRoot),
): string | undefined {
  const pinned = pinnedVersion(sdkRoot);
  if (pinned && versions.includes(pinned)) return pinned;
  const releases = versions.filter((v) => !v.includes('-'));
  return releases.at(-1) ?? versions.at(-1);
}

/** The corpus version or compliance-tree path env ADCP_COMPLIANCE names, if any. */
export function complianceFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.ADCP_COMPLIANCE?.trim() || undefined;
}

/**
 * The corpus a run takes test kits and schemas from: the one `named` (which must exist — its error lists what is
 * installed), else the newest installed one, else none (storyboards without corpus test kits still run).
 */
export function runCorpus(named: string | undefined, fromDir: string): Corpus | undefined {
  if (named) return resolveCorpus(named, fromDir);
  try {
    return resolveCorpus(undefined, fromDir);
  } catch {
    return undefined;
  }
}

/**
 * Resolves `compliance` (a corpus version like `3.0.6`, or a path to a
 * compliance tree) to a corpus. Without a value, the installed SDK's pinned version (defaultCorpusVersion).
 */
export function resolveCorpus(compliance: string | undefined, fromDir: string = process.cwd()): Corpus {
  const sdkRoot = findSdkRoot(fromDir);
  const looksLikePath =
    compliance !== undefined && (isAbsolute(compliance) || compliance.startsWith('.') || compliance.includes('/'));
  if (compliance && looksLikePath) {
    const root = resolve(fromDir, compliance);
    if (!existsSync(join(root, 'index.json')) && !existsSync(join(root, 'universal'))) {
      throw new CorpusNotFoundError(
        `ADCP_COMPLIANCE points at ${root}, which is not a compliance tree (no index.json or universal/ in it). Point it at a folder like node_modules/@adcp/sdk/compliance/cache/3.0.6.`,
      );
    }
    const version = corpusVersionOf(root);
    return {
      root,
      version,
      schemasDir: schemasDirFor(sdkRoot, version, root),
      choice: `the compliance tree at ${root}`,
    };
  }
  const fetched = compliance && !installedIn(sdkRoot, compliance) ? fetchedCorpus(compliance) : undefined;
  if (fetched) return fetched;
  if (!sdkRoot) {
    throw new CorpusNotFoundError(
      'the AdCP compliance corpus was asked for but @adcp/sdk is not installed. Run `npm install -D @adcp/sdk`, or set ADCP_COMPLIANCE to the path of a compliance tree.',
    );
  }
  const versions = installedCorpusVersions(sdkRoot);
  const version = compliance ?? defaultCorpusVersion(sdkRoot, versions);
  if (!version || !versions.includes(version)) {
    throw new CorpusNotFoundError(
      compliance
        ? `AdCP compliance version "${compliance}" is neither in the installed @adcp/sdk (it has: ${versions.join(', ') || 'none'}) nor fetched: \`npx vitest-adcp --version --compliance-version ${compliance}\` fetches a published version (from ADCP_BASE_URL, default ${DEFAULT_BASE_URL}); or set ADCP_COMPLIANCE to an installed version, or to a path.`
        : `the installed @adcp/sdk has no compliance corpus (it has: none). Install an @adcp/sdk that ships one, name a published version (--compliance-version / compliance.version / ADCP_COMPLIANCE: it is fetched), or set ADCP_COMPLIANCE to a path.`,
    );
  }
  const root = join(sdkRoot, 'compliance', 'cache', version);
  return {
    root,
    version,
    schemasDir: schemasDirFor(sdkRoot, version, root),
    choice: sdkChoice(sdkRoot, version, compliance !== undefined),
  };
}

/**
 * The run's stop when a corpus of a known version has no JSON Schemas of that version (and `schemasDir` names none):
 * its storyboards would otherwise be validated with whatever schemas are installed — another version's — and graded
 * against the wrong artifacts. The reference runner refuses the same.
 */
export function missingSchemas(corpus: Corpus, schemasDir: string | undefined): ConfigurationError | undefined {
  if (schemasDir || corpus.schemasDir || !corpus.version) return undefined;
  return new CorpusNotFoundError(
    `the compliance corpus at ${corpus.root} is AdCP ${corpus.version}, and no JSON Schemas of that version were found (beside it as a bundle's schemas/, or in an installed @adcp/sdk that ships ${corpus.version}); a corpus is never graded with another version's schemas. Name the version instead of a path (a published version is fetched with its schemas), unpack the whole bundle (adcp-${corpus.version}/schemas beside adcp-${corpus.version}/compliance), or set schemasDir.`,
  );
}

/** Whether the installed SDK at `sdkRoot` ships the corpus `version`. */
function installedIn(sdkRoot: string | undefined, version: string): boolean {
  return sdkRoot !== undefined && installedCorpusVersions(sdkRoot).includes(version);
}

/** A corpus fetched earlier by version (corpus/fetch.ts) and still intact in the per-user cache, or undefined. */
function fetchedCorpus(version: string): Corpus | undefined {
  const root = fetchedCorpusRoot(version);
  if (!root) return undefined;
  return {
    root,
    version: corpusVersionOf(root) ?? version,
    schemasDir: resolve(root, '..', 'schemas'),
    choice: `named, fetched from ${fetchedFrom(version) ?? 'the AdCP site'}, kept in the per-user cache`,
  };
}

/** The version the SDK at `sdkRoot` pins: its `ADCP_VERSION` file, if it has one. */
function pinnedVersion(sdkRoot: string): string | undefined {
  try {
    return readFileSync(join(sdkRoot, 'ADCP_VERSION'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Why the SDK's corpus `version` (already chosen): named, the SDK's pin, or the newest it ships. */
function sdkChoice(sdkRoot: string, version: string, named: boolean): string {
  const sdk = sdkVersion(sdkRoot);
  if (named) return `named, shipped in @adcp/sdk ${sdk}`;
  return version === pinnedVersion(sdkRoot)
    ? `the version @adcp/sdk ${sdk} pins`
    : `the newest release in @adcp/sdk ${sdk}`;
}

function sdkVersion(sdkRoot: string): string {
  return packageVersionAt(join(sdkRoot, 'package.json')) ?? 'of unknown version';
}

/**
 * Whether `compliance` (a version or a path) names a published version that neither the installed SDK nor the
 * per-user cache has: the corpus to fetch before anything resolves it (prepareCorpus).
 */
export function needsFetch(compliance: string | undefined, fromDir: string = process.cwd()): compliance is string {
  if (!compliance || !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(compliance)) return false;
  return !installedIn(findSdkRoot(fromDir), compliance) && fetchedCorpusRoot(compliance) === undefined;
}

/**
 * Before a run resolves its corpus (synchronously, in many places): a named published version that is not installed
 * is fetched, verified and cached (corpus/fetch.ts), so every later `resolveCorpus` finds it there, offline.
 */
export async function prepareCorpus(
  compliance: string | undefined,
  fromDir: string,
  options: FetchCorpusOptions = {},
): Promise<void> {
  if (!needsFetch(compliance, fromDir)) return;
  await fetchCorpus(compliance, { onProgress: (line) => console.error(line), ...options });
}

/** The schema directory to use when no corpus was selected: the default corpus version's. */
export function defaultSchemasDir(fromDir: string = process.cwd()): string | undefined {
  const sdkRoot = findSdkRoot(fromDir);
  if (!sdkRoot) return undefined;
  return schemasDirFor(sdkRoot, defaultCorpusVersion(sdkRoot));
}

const contracts = new Map<string, string | undefined>();

/**
 * The runner-output contract version a compliance tree ships (`universal/runner-output-contract.yaml`, its top-level
 * `version:`): 1.1.0 in the 3.0 corpus, 2.6.0 in 3.1.x. Undefined when the tree has none (or no tree): the newest.
 */
export function contractVersionOf(root: string | undefined): string | undefined {
  if (!root) return undefined;
  if (!contracts.has(root)) {
    let version: string | undefined;
    try {
      const text = readFileSync(join(root, 'universal', 'runner-output-contract.yaml'), 'utf8');
      version = /^version:\s*["']?([\w.-]+)["']?\s*$/m.exec(text)?.[1];
    } catch {
      version = undefined;
    }
    contracts.set(root, version);
  }
  return contracts.get(root);
}

/**
 * The JSON Schemas of the AdCP version of the compliance tree at `root` (schemasDirFor): beside it in a bundle, in the
 * SDK that ships it, or in the SDK installed where the tree lies or where the process runs. Undefined when none of
 * that version is found — never another version's schemas.
 */
export function corpusSchemasDir(root: string, fromDir: string = process.cwd()): string | undefined {
  const version = corpusVersionOf(root);
  for (const sdk of new Set([findSdkRoot(root), findSdkRoot(fromDir)])) {
    const dir = schemasDirFor(sdk, version, root);
    if (dir) return dir;
  }
  return undefined;
}
