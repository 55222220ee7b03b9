/**
 * The @adcp/sdk the compare bench runs against, and the corpus each runner is given.
 *
 * `--sdk <dir>` names a directory whose node_modules/@adcp/sdk is that SDK (e.g. /work/ref/sdk13, an npm project with
 * @adcp/sdk 13 and tsx installed); without it, this repository's own devDependency, as before. Everything on the
 * reference's side comes from that SDK: its examples (the agents), `adcp mock-server` (their upstreams), the
 * `adcp storyboard run` CLI, the tsx that starts the examples (the SDK directory's own when it has one), and the
 * corpus the reference loads (its ADCP_VERSION).
 *
 * `--compliance <version-or-path>` is the corpus vitest-adcp runs (given to it as ADCP_COMPLIANCE, an absolute
 * path): a version folder of that SDK's compliance/cache, or a path to a compliance tree. Default: the SDK's
 * ADCP_VERSION (a file at its package root, since 6.x), else the newest version it ships — what our runner picks
 * on its own from an install of that SDK.
 */
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * @typedef {object} Sdk
 * @property {string} dir         the directory whose node_modules holds it (the reference CLI's cwd)
 * @property {string} root        its package root (real path)
 * @property {string} version     its package version, e.g. `13.0.0`
 * @property {number} major
 * @property {string|undefined} adcpVersion  its ADCP_VERSION file, e.g. `3.1.15`
 * @property {string} tsx         the tsx binary that starts its examples
 * @property {boolean} own        true when it is this repository's devDependency (no `--sdk`)
 */

/** @returns {Sdk} */
export function openSdk(dir, repoRoot) {
  const own = dir === undefined;
  const base = own ? repoRoot : resolve(dir);
  const pkgDir = join(base, 'node_modules', '@adcp', 'sdk');
  if (!existsSync(join(pkgDir, 'package.json')))
    throw new Error(
      `no @adcp/sdk in ${join(base, 'node_modules')} (--sdk names a directory whose node_modules has it)`,
    );
  // The real path: what require.resolve (our runner's findSdkRoot, the examples' own imports) sees.
  const root = realpathSync(pkgDir);
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const adcpVersionFile = join(root, 'ADCP_VERSION');
  const adcpVersion = existsSync(adcpVersionFile) ? readFileSync(adcpVersionFile, 'utf8').trim() : undefined;
  const ownTsx = join(base, 'node_modules', '.bin', 'tsx');
  return {
    dir: base,
    root,
    version,
    major: Number(version.split('.')[0]),
    adcpVersion,
    tsx: existsSync(ownTsx) ? ownTsx : join(repoRoot, 'node_modules', '.bin', 'tsx'),
    own,
  };
}

/** Corpus versions the SDK ships (folders of compliance/cache with an index.json), oldest first. */
function shippedVersions(sdk) {
  const cache = join(sdk.root, 'compliance', 'cache');
  if (!existsSync(cache)) return [];
  return readdirSync(cache)
    .filter((name) => /^\d+\.\d+\.\d+(-[\w.]+)?$/.test(name) && existsSync(join(cache, name, 'index.json')))
    .sort(compareVersions);
}

/** Semver order, a release after its pre-releases (as our runner orders them in src/corpus.ts). */
function compareVersions(a, b) {
  const pa = a.split(/[.-]/).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  const pb = b.split(/[.-]/).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    if (pa[i] === pb[i]) continue;
    if (pa[i] === undefined) return 1;
    if (pb[i] === undefined) return -1;
    return pa[i] < pb[i] ? -1 : 1;
  }
  return 0;
}

/**
 * The compliance tree (absolute real path) for `compliance` — a version of the SDK's cache, or a path (absolute, or
 * relative to the current directory) — else the SDK's default as described in the header.
 */
export function complianceRoot(sdk, compliance) {
  const cache = join(sdk.root, 'compliance', 'cache');
  let root;
  if (compliance && (isAbsolute(compliance) || compliance.startsWith('.') || compliance.includes('/')))
    root = resolve(process.cwd(), compliance);
  else {
    const version = compliance ?? (sdk.adcpVersion || shippedVersions(sdk).at(-1));
    if (!version) throw new Error(`@adcp/sdk ${sdk.version} at ${sdk.root} ships no compliance corpus`);
    root = join(cache, version);
    if (!existsSync(root))
      throw new Error(
        `no corpus ${version} in @adcp/sdk ${sdk.version} (it ships: ${shippedVersions(sdk).join(', ') || 'none'})`,
      );
  }
  if (!existsSync(join(root, 'index.json')) && !existsSync(join(root, 'universal')))
    throw new Error(`${root} is not a compliance tree (no index.json or universal/ in it)`);
  return realpathSync(root);
}

/** The corpus the reference runner loads by default: its ADCP_VERSION, else the newest it ships. */
export const referenceComplianceRoot = (sdk) => complianceRoot(sdk, undefined);

/** The AdCP version a compliance tree says it is (its index.json adcp_version), undefined when it says none. */
export function corpusVersion(root) {
  try {
    return JSON.parse(readFileSync(join(root, 'index.json'), 'utf8')).adcp_version;
  } catch {
    return undefined;
  }
}
