/**
 * What the benches that run the bin as a user does share: an SDK example agent started with its mock upstream on
 * 127.0.0.1 (withAgent), and a user's repository with the packed package installed in its node_modules (userRepo).
 * bench/speed.mjs and bench/concurrency-verdicts.mjs.
 *
 * Both take the opened SDK (bench/compare/sdk.mjs openSdk; default this repository's devDependency): its examples,
 * its `adcp mock-server`, the tsx it starts them with, and the @adcp/sdk the user's repository has installed — so
 * that our runner there picks the corpus that SDK pins, as it would for a user of that SDK.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { answersHttp, answersMcp, freePort, startProcess, stopProcess, waitUntilReady } from './processes.mjs';
import { openSdk } from './sdk.mjs';

const root = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const preload = join(root, 'bench', 'compare', 'listen-local.mjs');
/** This repository's devDependency, opened once for the callers that name no SDK. */
let ownSdk;
const defaultSdk = () => (ownSdk ??= openSdk(undefined, root));

/**
 * The environment of an example and its mock upstream: the spec's variables and ports, the port map of the
 * listen-local preload; no inherited PORT (the examples read it); no npm registry look-up by the SDK's CLI (13.x
 * asks for its latest version otherwise).
 */
function agentEnv(spec, ports) {
  const inherited = { ...process.env };
  delete inherited.PORT;
  return {
    ...inherited,
    NODE_ENV: 'development',
    ADCP_SKIP_VERSION_CHECK: '1',
    ...(spec.env?.(ports) ?? {}),
    ADCP_BENCH_PORT_MAP: JSON.stringify(spec.fixedPort ? { [spec.fixedPort]: ports.agent } : {}),
  };
}

/**
 * Starts the example agent of `spec` (bench/compare/agents.mjs, the set of `sdk`) and its mock upstream, each on a
 * free port of 127.0.0.1, waits until the agent answers `tools/list` on its MCP endpoint, runs `fn(url)` and stops
 * both, also when `fn` throws. Their output goes to `<work>/<agent>-agent.log` and `-mock.log` (appended to).
 * @template T
 * @param {import('./agents.mjs').AgentSpec} spec
 * @param {(url: string) => Promise<T>} fn
 * @param {{ work: string, sdk?: import('./sdk.mjs').Sdk }} o
 * @returns {Promise<T>}
 */
export async function withAgent(spec, fn, { work, sdk = defaultSdk() }) {
  const ports = { agent: await freePort(), mock: spec.mock ? await freePort() : undefined };
  const env = agentEnv(spec, ports);
  let mock;
  let agent;
  try {
    if (spec.mock) {
      mock = startProcess(
        `mock ${spec.mock}`,
        process.execPath,
        ['--import', preload, join(sdk.root, 'bin', 'adcp.js'), 'mock-server', spec.mock, '--port', String(ports.mock)],
        { cwd: sdk.dir, env, logFile: join(work, `${spec.name}-mock.log`) },
      );
      await waitUntilReady(mock, answersHttp(`http://127.0.0.1:${ports.mock}/_debug/traffic`), { timeoutMs: 90_000 });
    }
    agent = startProcess(spec.name, sdk.tsx, ['--import', preload, join(sdk.root, 'examples', spec.example)], {
      cwd: sdk.dir,
      env,
      logFile: join(work, `${spec.name}-agent.log`),
    });
    const url = `http://127.0.0.1:${ports.agent}/mcp`;
    await waitUntilReady(agent, answersMcp(url, spec.auth), { timeoutMs: 90_000 });
    return await fn(url);
  } finally {
    await stopProcess(agent);
    await stopProcess(mock);
  }
}

/**
 * Links this repository's node_modules into `modules`, but not its caches (.vite, .cache: each bench repository
 * starts with its own, as a fresh install does) and, for another SDK than the devDependency, `@adcp/sdk` is that
 * SDK (its real root, so its own dependencies resolve from its own node_modules).
 */
function linkDependencies(modules, sdk) {
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry === '.vite' || entry === '.cache' || entry === '.package-lock.json') continue;
    if (entry === '@adcp' && !sdk.own) linkScope(join(root, 'node_modules', '@adcp'), join(modules, '@adcp'), sdk);
    else symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
  }
}

/** The @adcp scope with its `sdk` replaced by `sdk.root` and its other packages linked as they are. */
function linkScope(from, to, sdk) {
  mkdirSync(to);
  for (const entry of readdirSync(from)) if (entry !== 'sdk') symlinkSync(join(from, entry), join(to, entry));
  symlinkSync(sdk.root, join(to, 'sdk'));
}

/**
 * The package as `npm pack` ships it (package.json, dist/, schema/), from the build `dist` and the package.json and
 * schema/ beside it (another checkout's, say), else this repository's, copied to `to`.
 * @returns {string} the copy's dist/
 */
export function copyPackage(dist, to) {
  mkdirSync(to, { recursive: true });
  cpSync(dist, join(to, 'dist'), { recursive: true });
  for (const part of ['package.json', 'schema']) {
    const beside = join(dist, '..', part);
    cpSync(existsSync(beside) ? beside : join(root, part), join(to, part), { recursive: true });
  }
  return join(to, 'dist');
}

/**
 * A user's repository, `<work>/<name>`: the package installed under node_modules/vitest-adcp (package.json, dist/,
 * schema/, as `npm pack` ships them, copied: a rebuild while a bench runs does not reach it) and every other
 * dependency linked from this repository's node_modules, @adcp/sdk being `sdk`'s. Where the package sits matters:
 * Vitest runs node_modules packages natively but passes any other file (an absolute dist/ path, say) through Vite's
 * module runner in each worker, which is slower and not what users run. `<work>/<name>` must not exist yet.
 * @param {string} work
 * @param {string} name
 * @param {{ sdk?: import('./sdk.mjs').Sdk, dist?: string }} [o]  `dist`: the build to install (default this
 *   repository's dist/); its package.json and schema/ are the ones beside it when it has them, else ours
 * @returns {string} the repository's directory; its bin is `<dir>/node_modules/vitest-adcp/dist/cli.js`
 */
export function userRepo(work, name, { sdk = defaultSdk(), dist = join(root, 'dist') } = {}) {
  const dir = join(work, name);
  const modules = join(dir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  linkDependencies(modules, sdk);
  copyPackage(dist, join(modules, 'vitest-adcp'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `bench-${name}`, private: true, type: 'module' }));
  return dir;
}
