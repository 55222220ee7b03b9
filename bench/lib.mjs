/**
 * What the run benches share: the built package, the installed corpus, the
 * fixture agent, and one function per runner that runs a storyboard file
 * against a URL and returns its step outcomes.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';

export const root = new URL('..', import.meta.url).pathname;
/**
 * The built package's internal entry (dist/internal.js: the public API and what the benches drive beyond it), as
 * `npm run build` makes it (the npm scripts run it first); VITEST_ADCP_DIST: another build of it, e.g. a snapshot.
 */
export const adcp = await import(join(process.env.VITEST_ADCP_DIST ?? join(root, 'dist'), 'internal.js'));
export const reference = await import('@adcp/sdk/testing');
export const { startFixtureAgent } = await import(join(root, 'fixtures', 'agent', 'server.mjs'));
export const corpus = adcp.resolveCorpus(undefined, root);

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Our engine, configured like a user run (test kit from the storyboard's prerequisites); protocol 'a2a': url is an A2A endpoint. */
export async function runOurs(file, url, protocol = 'mcp') {
  const loaded = adcp.loadStoryboardFile(file, { corpusRoot: corpus.root });
  if (!loaded.ok) throw new Error(`${file} does not load`);
  const run = adcp.openStoryboardRun(
    loaded.storyboard,
    { agentUrl: url, protocol, corpusRoot: corpus.root, timeoutMs: 5_000 },
    { env: {} },
  );
  try {
    return (await run.runAll()).map((o) => ({
      key: `${o.result.phase_id}.${o.result.step_id}`,
      status: o.status,
      result: o.result,
    }));
  } finally {
    await run.close();
  }
}

function testKitFor(file, storyboard) {
  const ref = storyboard.prerequisites?.test_kit;
  if (!ref) return undefined;
  const path = ref.startsWith('.') ? join(dirname(file), ref) : join(corpus.root, ref);
  return parse(readFileSync(path, 'utf8'));
}

/** The reference runner of @adcp/sdk, with the same test kit and its API key as the default credential. Quiet. */
export async function runReference(file, url, protocol = 'mcp') {
  const quiet = [console.log, console.warn, console.error];
  console.log = console.warn = console.error = () => {};
  try {
    const storyboard = reference.loadStoryboardFile(file);
    const kit = testKitFor(file, storyboard);
    const result = await reference.runStoryboard(url, storyboard, {
      allow_http: true,
      test_kit: kit,
      auth: kit?.auth?.api_key ? { type: 'bearer', token: kit.auth.api_key } : undefined,
      protocol,
    });
    return result.phases.flatMap((phase) =>
      phase.steps.map((step) => ({
        key: `${phase.phase_id}.${step.step_id}`,
        status: step.passed ? 'passed' : 'failed',
      })),
    );
  } finally {
    [console.log, console.warn, console.error] = quiet;
  }
}
