/**
 * The two annotated storyboards of examples/ (the README's "Write your own storyboard"; `npx vitest-adcp init` copies
 * discovery.storyboard.yaml): they load with strict keys and no warning, validate against the shipped JSON Schema,
 * and pass — through the public `openStoryboardRun`, with the default (enriched) requests and nothing for the request
 * builder to fill — against the fixture agent and against an @adcp/sdk example seller
 * (examples/hello_seller_adapter_guaranteed.ts over its `adcp mock-server sales-guaranteed` upstream, started as
 * bench/compare-reference.mjs starts it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { loadStoryboardFile, openStoryboardRun } from '../../src/index.js';
import { repoRoot } from '../helpers/run-vitest.js';

const EXAMPLES = {
  discovery: join(repoRoot, 'examples', 'discovery.storyboard.yaml'),
  mediaBuy: join(repoRoot, 'examples', 'media-buy.storyboard.yaml'),
};
/** The token of @adcp/sdk's hello_* example adapters (their ADCP_AUTH_TOKEN default). */
const HARNESS_TOKEN = 'sk_harness_do_not_use_in_prod';

/** Each step of the example against the agent: `step_id → passed | failed | skipped:<reason>:<tool>`, and every warning. */
async function runExample(file: string, agentUrl: string, authToken: string) {
  const loaded = loadStoryboardFile(file);
  if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join('\n'));
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('ADCP_')));
  const run = openStoryboardRun(loaded.storyboard, { agentUrl, authToken, projectRoot: repoRoot }, { env });
  try {
    const outcomes = await run.runAll();
    const verdicts = Object.fromEntries(
      outcomes.map((o) => [
        o.result.step_id,
        o.status === 'skipped'
          ? `skipped:${o.result.skip?.reason}:${/tool "([^"]+)"/.exec(o.result.skip?.detail ?? '')?.[1] ?? ''}`
          : o.status,
      ]),
    );
    const failures = outcomes
      .filter((o) => o.status === 'failed')
      .map(
        (o) =>
          `${o.result.step_id}: ${o.result.error ?? JSON.stringify(o.result.validations.filter((v) => !v.passed))}`,
      );
    return { verdicts, failures, warnings: outcomes.flatMap((o) => o.result.warnings ?? []) };
  } finally {
    await run.close();
  }
}

describe('examples/', () => {
  it.each(Object.entries(EXAMPLES))(
    '%s loads with strict keys and no warning, and validates against the shipped JSON Schema',
    (_, file) => {
      const loaded = loadStoryboardFile(file, { strictKeys: true });
      expect(loaded.ok && loaded.diagnostics, JSON.stringify(loaded.diagnostics)).toEqual([]);
      const schema = JSON.parse(readFileSync(join(repoRoot, 'schema', 'storyboard.schema.json'), 'utf8'));
      const validate = new Ajv({ strict: true, allErrors: true }).compile(schema);
      const text = readFileSync(file, 'utf8');
      expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
      // The editor modeline the README gives, so a copy anywhere gets completion.
      expect(text.split('\n')[0]).toBe(`# yaml-language-server: $schema=${schema.$id}`);
    },
  );

  it('the discovery example passes every step against the fixture agent', async () => {
    const { verdicts, failures, warnings } = await runExample(EXAMPLES.discovery, inject('agentUrl'), 'demo-examples');
    expect(failures).toEqual([]);
    expect(verdicts).toEqual({ capabilities: 'passed', products_from_brief: 'passed', refine_first_product: 'passed' });
    expect(warnings).toEqual([]);
  });

  it('the media-buy example passes every step against the fixture agent: create, read back, update, pause', async () => {
    const { verdicts, failures, warnings } = await runExample(EXAMPLES.mediaBuy, inject('agentUrl'), 'demo-examples');
    expect(failures).toEqual([]);
    expect(verdicts).toEqual({
      find_product: 'passed',
      create_buy: 'passed',
      read_back: 'passed',
      update_budget: 'passed',
      pause_buy: 'passed',
    });
    expect(warnings).toEqual([]);
  });
});

/** A port that was free on 127.0.0.1 a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('against an @adcp/sdk example seller (hello_seller_adapter_guaranteed.ts + mock-server sales-guaranteed)', () => {
  const started: ChildProcess[] = [];
  let logDir: string;
  let agentUrl: string;

  /** Detached (its own process group, so tsx's child goes with it), output to a log file. */
  function start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
    const fd = openSync(join(logDir, `${name}.log`), 'a');
    const child = spawn(command, args, { cwd: repoRoot, env, detached: true, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    started.push(child);
    return child;
  }
  async function until(name: string, child: ChildProcess, probe: () => Promise<unknown>): Promise<void> {
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) break;
      if (
        await probe().then(
          () => true,
          () => false,
        )
      )
        return;
      await delay(200);
    }
    throw new Error(`${name} did not start:\n${readFileSync(join(logDir, `${name}.log`), 'utf8').slice(-3000)}`);
  }

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'vitest-adcp-examples-'));
    const sdk = join(repoRoot, 'node_modules', '@adcp', 'sdk');
    const preload = join(repoRoot, 'bench', 'compare', 'listen-local.mjs'); // every listen on 127.0.0.1
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'development' };
    for (const key of Object.keys(env))
      if (key.startsWith('VITEST') || key === 'NODE_OPTIONS' || key === 'PORT' || key.startsWith('ADCP_'))
        delete env[key];
    const mockPort = await freePort();
    const mock = start(
      'mock',
      process.execPath,
      ['--import', preload, join(sdk, 'bin', 'adcp.js'), 'mock-server', 'sales-guaranteed', '--port', String(mockPort)],
      env,
    );
    await until('mock', mock, () =>
      fetch(`http://127.0.0.1:${mockPort}/_debug/traffic`, { signal: AbortSignal.timeout(2000) }),
    );
    const agentPort = await freePort();
    const seller = start(
      'seller',
      join(repoRoot, 'node_modules', '.bin', 'tsx'),
      ['--import', preload, join(sdk, 'examples', 'hello_seller_adapter_guaranteed.ts')],
      {
        ...env,
        PORT: String(agentPort),
        UPSTREAM_URL: `http://127.0.0.1:${mockPort}`,
      },
    );
    agentUrl = `http://127.0.0.1:${agentPort}/mcp`;
    await until('seller', seller, () =>
      fetch(agentUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${HARNESS_TOKEN}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tools/list', params: {} }),
        signal: AbortSignal.timeout(2000),
      }).then((res) => res.arrayBuffer()),
    );
  }, 120_000);

  afterAll(async () => {
    for (const child of started.reverse()) {
      if (child.pid === undefined || child.exitCode !== null) continue;
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await Promise.race([new Promise((resolve) => child.once('exit', resolve)), delay(3000)]);
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // exited
      }
    }
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  });

  it('the discovery example passes every step', async () => {
    const { verdicts, failures, warnings } = await runExample(EXAMPLES.discovery, agentUrl, HARNESS_TOKEN);
    expect(failures).toEqual([]);
    expect(verdicts).toEqual({ capabilities: 'passed', products_from_brief: 'passed', refine_first_product: 'passed' });
    expect(warnings).toEqual([]);
  }, 60_000);

  it('the media-buy example passes every step: create, read back, update, pause', async () => {
    const { verdicts, failures, warnings } = await runExample(EXAMPLES.mediaBuy, agentUrl, HARNESS_TOKEN);
    expect(failures).toEqual([]);
    expect(verdicts).toEqual({
      find_product: 'passed',
      create_buy: 'passed',
      read_back: 'passed',
      update_budget: 'passed',
      pause_buy: 'passed',
    });
    expect(warnings).toEqual([]);
  }, 60_000);
});
