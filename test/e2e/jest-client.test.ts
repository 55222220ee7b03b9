/**
 * `createAdcpClient` and the matchers inside real Jest (the repo's jest devDependency, 30.5), on the Node running the
 * tests (20 in CI): the packed package installed into a fresh CommonJS project (`npm init -y` writes
 * `"type": "commonjs"`), a plain `.js` test that `require`s `vitest-adcp/client` and registers the matchers with
 * `setupFilesAfterEnv: ['vitest-adcp/matchers/jest']`, against the fixture agent. Jest's module registry loads no
 * ES module on Node 20, so this passes only while both entries' `require` conditions reach the CommonJS build
 * (dist/cjs/, scripts/build-cjs.mjs) and nothing in it requires an ES module. Once without the preset (plain Jest),
 * once with it (its test environment hands the matchers over). The README's Jest example runs too, as written, with
 * the Jest config it names. And issue 33's `agent.start` under Jest from the packed package: the preset's `adcp.start`
 * starts an @adcp/sdk example seller, a corpus storyboard passes against it, and nothing of it is left after the run.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectGone } from '../helpers/agent-gone.js';
import { corpusStubDir, readJestJson } from '../helpers/jest-project.js';
import { installDev } from '../helpers/installed.js';
import { packedTarball } from '../helpers/packed.js';
import { closedPort } from '../helpers/ports.js';
import { sellerCommand } from '../helpers/sdk-seller.js';
import { repoRoot } from '../helpers/run-vitest.js';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
/** The README's Jest client example, and the Jest config its first line names. */
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const readmeJest = /```js\n(\/\/ client\.test\.js — jest\.config\.js: (\{[^\n]*\})\n[\s\S]*?)```/.exec(readme);
let dir: string;
let project: string;

/** The hand-written Jest test, as a Jest user writes it: CommonJS, no transform needed, no Vitest anywhere. */
const CLIENT_TEST = `const { createAdcpClient } = require('vitest-adcp/client');

const adcp = createAdcpClient({ url: process.env.ADCP_AGENT_URL, protocol: 'mcp', auth: process.env.ADCP_AUTH_TOKEN });
afterAll(() => adcp.close());

test('guards list_creatives', async () => {
  const refused = await adcp.call('list_creatives', {}, { auth: 'none' });
  expect(refused.status).toBe(401);
  expect(refused).toRejectUnauthenticated();
  expect(refused).toExposeWwwAuthenticate('Bearer', { realm: expect.stringContaining('127.0.0.1') });
  expect(refused).toHaveAdcpErrorCode('AUTH_REQUIRED');
  expect(await adcp.call('list_creatives', {}, { auth: 'bogus' })).toExposeWwwAuthenticate('Bearer', { error: 'invalid_token' });
  await expect(process.env.ADCP_AGENT_URL).toRejectUnauthenticated({ task: 'list_creatives' });
});

test('answers capabilities to the spec', async () => {
  const caps = await adcp.call('get_adcp_capabilities', { context: { correlation_id: 'jest-cjs' } });
  expect(caps.status).toBe(200);
  expect(caps).not.toRejectUnauthenticated();
  expect(caps).toMatchAdcpSchema();
  expect(caps).toEchoContext({ correlation_id: 'jest-cjs' });
  expect(caps).not.toHaveAdcpErrorCode();
});

test('a failing matcher says what it wanted, an asymmetric param with its argument', async () => {
  const refused = await adcp.call('list_creatives', {}, { auth: 'none' });
  let message = '';
  try {
    expect(refused).toExposeWwwAuthenticate('Bearer', { realm: expect.stringContaining('elsewhere') });
  } catch (error) {
    message = error.message;
  }
  expect(message).toMatch(/offering Bearer with realm=StringContaining .*elsewhere/);
});
`;

/**
 * agent.start under Jest (issue 33): the preset starts the agent from START_COMMAND (PORT for it from START_PORT),
 * waits until it answers at START_URL, runs capability_discovery against it, and stops its whole process group.
 */
const START_CONFIG = `const { createJestPreset } = require('vitest-adcp/jest');
module.exports = createJestPreset({
  adcp: {
    agentUrl: process.env.START_URL,
    start: { command: process.env.START_COMMAND, env: { PORT: process.env.START_PORT, NODE_ENV: 'development' }, timeoutMs: 90000 },
  },
  compliance: { storyboards: ['capability_discovery'] },
});
`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-jest-client-'));
  // Packed once per test run, shared with the other packed-package tests (test/helpers/packed.ts).
  const tarball = await packedTarball();
  project = join(dir, 'jest-agent');
  mkdirSync(project);
  // What `npm init -y` writes today.
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'jest-agent', version: '1.0.0', private: true, type: 'commonjs' }, null, 2),
  );
  installDev(project, [tarball, `jest@${pkg.devDependencies.jest}`, `@adcp/sdk@${pkg.devDependencies['@adcp/sdk']}`]);
  writeFileSync(join(project, 'jest.config.js'), `module.exports = ${readmeJest![2]};\n`);
  writeFileSync(
    join(project, 'jest.preset.config.js'),
    "module.exports = { preset: 'vitest-adcp/jest', setupFilesAfterEnv: ['vitest-adcp/matchers/jest'] };\n",
  );
  writeFileSync(join(project, 'jest.start.config.js'), START_CONFIG);
  writeFileSync(join(project, 'client.test.js'), CLIENT_TEST);
  writeFileSync(join(project, 'readme.test.js'), readmeJest![1]);
}, 300_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (project) rmSync(corpusStubDir(project), { recursive: true, force: true });
});

function jest(config: string, extraEnv: Record<string, string> = {}, args: string[] = []) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ADCP_AGENT_URL: inject('agentUrl'),
    ADCP_AUTH_TOKEN: 'demo-jest-cjs',
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    ...extraEnv,
  };
  for (const key of Object.keys(env))
    if (key.startsWith('VITEST') || key === 'NODE_OPTIONS' || key === 'ADCP_STORYBOARDS') delete env[key];
  const result = spawnSync(
    process.execPath,
    [
      join(project, 'node_modules', 'jest', 'bin', 'jest.js'),
      '--ci',
      '-c',
      config,
      '--json',
      '--outputFile=results.json',
      ...args,
    ],
    {
      cwd: project,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  return {
    status: result.status,
    output: result.stdout + result.stderr,
    results: () => readJestJson(join(project, 'results.json')),
  };
}

describe(`Jest ${pkg.devDependencies.jest} on Node ${process.versions.node}, a CommonJS project`, () => {
  it('require("vitest-adcp/client") is the CommonJS build, with the client and the matchers', () => {
    const out = execFileSync(
      process.execPath,
      [
        '-e',
        "const c = require('vitest-adcp/client'); console.log(JSON.stringify([require.resolve('vitest-adcp/client'), require.resolve('vitest-adcp/matchers/jest'), typeof c.createAdcpClient, Object.keys(c.adcpMatchers)]))",
      ],
      { cwd: project, encoding: 'utf8' },
    );
    const [client, matchers, createType, names] = JSON.parse(out);
    expect(client).toMatch(/node_modules\/vitest-adcp\/dist\/cjs\/matchers\/client\.js$/);
    expect(matchers).toMatch(/node_modules\/vitest-adcp\/dist\/cjs\/matchers\/jest\.js$/);
    expect(createType).toBe('function');
    expect(names).toEqual([
      'toRejectUnauthenticated',
      'toExposeWwwAuthenticate',
      'toMatchAdcpSchema',
      'toHaveAdcpErrorCode',
      'toEchoContext',
      'toPassStoryboardStep',
    ]);
  });

  it.each([
    ['without the preset', 'jest.config.js'],
    ['with the preset', 'jest.preset.config.js'],
  ])(
    'a hand-written test requires createAdcpClient and uses the matchers against the agent (%s)',
    (_, config) => {
      const run = jest(config);
      expect(run.status, run.output).toBe(0);
      const results = run.results();
      const byFile = (name: string) =>
        results.testResults.find((r) => r.name.endsWith(`/${name}`))?.assertionResults.map((a) => [a.title, a.status]);
      expect(byFile('client.test.js')).toEqual([
        ['guards list_creatives', 'passed'],
        ['answers capabilities to the spec', 'passed'],
        ['a failing matcher says what it wanted, an asymmetric param with its argument', 'passed'],
      ]);
      // The README's example, as written.
      expect(byFile('readme.test.js')).toEqual([['guards list_creatives', 'passed']]);
      expect(run.output).not.toMatch(/Must use import|ERR_REQUIRE_ESM|experimental-vm-modules|is not in cache/);
    },
    180_000,
  );
});

describe('agent.start under Jest, from the packed package (issue 33)', () => {
  it('the preset starts an @adcp/sdk example seller, a storyboard passes against it, and nothing of it is left after the run', async () => {
    const port = await closedPort();
    const pidFile = join(dir, 'jest-seller.pid');
    const run = jest(
      'jest.start.config.js',
      {
        START_URL: `http://127.0.0.1:${port}/mcp`,
        START_COMMAND: sellerCommand(pidFile),
        START_PORT: String(port),
        ADCP_AUTH_TOKEN: 'sk_harness_do_not_use_in_prod',
      },
      // The corpus stubs only: the project's hand-written tests are for the fixture agent.
      ['.adcp-corpus'],
    );
    expect(run.status, run.output).toBe(0);
    const steps = run.results().testResults.flatMap((r) => r.assertionResults.map((a) => a.status));
    expect(steps, run.output).toEqual(['passed', 'passed']);
    await expectGone(pidFile, port);
  }, 240_000);
});
