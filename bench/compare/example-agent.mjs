/**
 * What the benches that run the bin as a user does share: an SDK example agent started with its mock upstream on
 * 127.0.0.1 (withAgent), and a user's repository with the packed package installed in its node_modules (userRepo).
 * bench/speed.mjs and bench/concurrency-verdicts.mjs.
 */
import { cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { answersHttp, answersMcp, freePort, startProcess, stopProcess, waitUntilReady } from './processes.mjs';

const root = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const sdkRoot = join(root, 'node_modules', '@adcp', 'sdk');
const preload = join(root, 'bench', 'compare', 'listen-local.mjs');

/**
 * Starts the example agent of `spec` (bench/compare/agents.mjs) and its mock upstream, each on a free port of
 * 127.0.0.1, waits until the agent answers `tools/list` on its MCP endpoint, runs `fn(url)` and stops both, also when
 * `fn` throws. Their output goes to `<work>/<agent>-agent.log` and `-mock.log` (appended to).
 * @template T
 * @param {import('./agents.mjs').AgentSpec} spec
 * @param {(url: string) => Promise<T>} fn
 * @param {{ work: string }} o
 * @returns {Promise<T>}
 */
export async function withAgent(spec, fn, { work }) {
  const ports = { agent: await freePort(), mock: spec.mock ? await freePort() : undefined };
  const env = {
    ...process.env,
    NODE_ENV: 'development',
    ...(spec.env?.(ports) ?? {}),
    ADCP_BENCH_PORT_MAP: JSON.stringify(spec.fixedPort ? { [spec.fixedPort]: ports.agent } : {}),
  };
  let mock;
  let agent;
  try {
    if (spec.mock) {
      mock = startProcess(
        `mock ${spec.mock}`,
        process.execPath,
        ['--import', preload, join(sdkRoot, 'bin', 'adcp.js'), 'mock-server', spec.mock, '--port', String(ports.mock)],
        { cwd: root, env, logFile: join(work, `${spec.name}-mock.log`) },
      );
      await waitUntilReady(mock, answersHttp(`http://127.0.0.1:${ports.mock}/_debug/traffic`), { timeoutMs: 90_000 });
    }
    agent = startProcess(
      spec.name,
      join(root, 'node_modules', '.bin', 'tsx'),
      ['--import', preload, join(sdkRoot, 'examples', spec.example)],
      { cwd: root, env, logFile: join(work, `${spec.name}-agent.log`) },
    );
    const url = `http://127.0.0.1:${ports.agent}/mcp`;
    await waitUntilReady(agent, answersMcp(url, spec.auth), { timeoutMs: 90_000 });
    return await fn(url);
  } finally {
    await stopProcess(agent);
    await stopProcess(mock);
  }
}

/**
 * A user's repository, `<work>/<name>`: the package installed under node_modules/vitest-adcp (package.json, dist/,
 * schema/, as `npm pack` ships them) and every other dependency linked from this repository's node_modules. Where the
 * package sits matters: Vitest runs node_modules packages natively but passes any other file (an absolute dist/ path,
 * say) through Vite's module runner in each worker, which is slower and not what users run. `<work>/<name>` must not
 * exist yet.
 * @returns {string} the repository's directory; its bin is `<dir>/node_modules/vitest-adcp/dist/cli.js`
 */
export function userRepo(work, name) {
  const dir = join(work, name);
  const modules = join(dir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  // Not this repository's caches (.vite, .cache): each bench repository starts with its own, as a fresh install does.
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry !== '.vite' && entry !== '.cache' && entry !== '.package-lock.json')
      symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
  }
  mkdirSync(join(modules, 'vitest-adcp'));
  for (const part of ['package.json', 'dist', 'schema'])
    cpSync(join(root, part), join(modules, 'vitest-adcp', part), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `bench-${name}`, private: true, type: 'module' }));
  return dir;
}
