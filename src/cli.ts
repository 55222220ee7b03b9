#!/usr/bin/env node
/**
 * `npx vitest-adcp <agent-url>`: the storyboards an agent must pass, run as
 * Vitest tests, with no config file in the repository — for CI. Vitest runs
 * through its Node API with our plugin configured inline; the user's own
 * vitest/vite config is not loaded (`config: false`) and their own tests are
 * not collected. Everything after `--` is Vitest's (`-t`, `--bail`,
 * `--reporter`, file filters), parsed by Vitest's own CLI parser.
 *
 * `--list` and the run's first line say which storyboards run and why, computed
 * here without Vitest (cli/selection.ts): `--list` never starts Vitest. The
 * agent's capabilities are asked once, here; the plugin gets the ids.
 *
 * `npx vitest-adcp init` writes a starter storyboard (examples/discovery.storyboard.yaml of this package).
 *
 * Exit status: 0 every step passed (or skipped), 1 a step failed, 2 a usage or
 * configuration error (nothing ran) — one raised while Vitest starts the run
 * (the plugin's agent preflight: plugin/agent-preflight.ts) included —,
 * 130/143 interrupted by SIGINT/SIGTERM (the run was cancelled; the report,
 * when asked for, has what ran).
 */
import { relative } from 'node:path';
import { configurationFailure } from './cli/failure.js';
import type { Corpus } from './corpus.js';
import { init } from './cli/init.js';
import { parse, type Command, type Invocation } from './cli/invocation.js';
import { preloadRun, runVitest } from './cli/run-vitest.js';
import { withStartedAgent } from './cli/start-agent.js';
import { explainSelection, selectionSummary, type Selection } from './cli/selection.js';
import { USAGE } from './cli/usage.js';
import { UsageError } from './cli/usage-error.js';
import { printVersions } from './cli/version.js';
import type { AdcpStoryboardsOptions } from './plugin/plugin.js';
import { sanitizeLine, secretsInUrl } from './model/redact.js';

/** The secrets of a run (the token, credentials in the URL): scrubbed from everything this command prints. */
function runSecrets(invocation: Invocation | undefined, env: NodeJS.ProcessEnv): string[] {
  if (!invocation) return [];
  return [invocation.plugin.agent?.auth?.token ?? env.ADCP_AUTH_TOKEN ?? '', ...secretsInUrl(invocation.url)];
}

/**
 * The storyboards to run, and why: the agent's capabilities asked here (once; the plugin then gets the ids), or the
 * names given. The same selection code as the plugin's, so `--list` is what the run runs.
 */
async function select(
  invocation: Invocation,
  warnMissingScenarios: boolean,
): Promise<Selection & { capabilityIds?: string[] }> {
  let capabilityIds: string[] | undefined;
  if (invocation.fromCapabilities && invocation.corpusRoot) {
    const [{ storyboardIdsForAgent }, { agentAccess }] = await Promise.all([
      import('./plugin/capabilities.js'),
      import('./plugin/agent-preflight.js'),
    ]);
    capabilityIds = await storyboardIdsForAgent(agentAccess(invocation.runtime), invocation.corpusRoot, {
      allowUnsupportedVersion: invocation.allowUnsupportedVersion,
    });
  }
  const selection = explainSelection({
    ...(invocation.corpusRoot ? { corpusRoot: invocation.corpusRoot } : {}),
    ...invocation.names,
    ...(capabilityIds ? { capabilityIds } : {}),
    sequential: invocation.plugin.sequential === true,
    ...(warnMissingScenarios ? { warn: (message: string) => console.warn(`[vitest-adcp] ${message}`) } : {}),
  });
  if (capabilityIds) await markNotApplicable(invocation, selection);
  return { ...selection, ...(capabilityIds ? { capabilityIds } : {}) };
}

/**
 * The storyboards the agent's capabilities answer grades not applicable before the run, marked as the plugin will grade
 * them (plugin/up-front.ts, from the same answer): the run leaves them out and reports each skipped.
 */
async function markNotApplicable(invocation: Invocation, selection: Selection): Promise<void> {
  const [{ agentAccess }, { gradedUpFront }] = await Promise.all([
    import('./plugin/agent-preflight.js'),
    import('./plugin/up-front.js'),
  ]);
  const graded = await gradedUpFront(
    agentAccess(invocation.runtime),
    selection.storyboards.map((s) => s.file),
    invocation.plugin.schemasDir ?? invocation.corpus?.schemasDir,
  );
  const skips = new Map(graded.map((n) => [n.storyboard.file, n.skip]));
  for (const storyboard of selection.storyboards) {
    const skip = skips.get(storyboard.file);
    if (skip) storyboard.notApplicable = skip.detail;
  }
}

/** The corpus a run takes storyboards from, and why this one: `AdCP 3.1.15 (the version @adcp/sdk 13.0.0 pins)`. */
function corpusLine(corpus: Corpus): string {
  return `AdCP ${corpus.version ?? '(version unknown)'} compliance corpus (${corpus.choice})`;
}

/** `--list`: one line per storyboard, `id<TAB>path<TAB>why`, then the notes, the corpus and the count. */
function printSelection(selection: Selection, cwd: string, corpus: Corpus | undefined): void {
  for (const storyboard of selection.storyboards) {
    const why = [...storyboard.reasons];
    // The detail quotes what the agent declared: on one line.
    if (storyboard.notApplicable !== undefined)
      why.push(`not applicable up front: ${sanitizeLine(storyboard.notApplicable)}`);
    console.log(`${storyboard.id}\t${relative(cwd, storyboard.file)}\t${why.join('; ')}`);
  }
  for (const note of selection.notes) console.log(`note: ${note}`);
  if (corpus) console.log(`corpus: ${corpusLine(corpus)}`);
  console.log(selectionSummary(selection));
}

/** Runs the command; resolves to the exit status. */
async function main(
  argv: string[],
  cwd: string = process.cwd(),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let command: Command;
  try {
    command = await parse(argv, cwd, env);
  } catch (error) {
    return configurationFailure(error, error instanceof UsageError);
  }
  if (command.kind === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (command.kind === 'version') return printVersions(cwd, command.version);
  if (command.kind === 'init') {
    try {
      return init(command.file, cwd);
    } catch (error) {
      return configurationFailure(error, false);
    }
  }
  return run(command.invocation, cwd, env);
}

/** A run: the agent of `--start` up when one is given, then the selection and the storyboards (selectAndRun). */
async function run(invocation: Invocation, cwd: string, env: NodeJS.ProcessEnv): Promise<number> {
  const secrets = runSecrets(invocation, env);
  // `--start`: the agent up before anything asks it (a --list of named storyboards asks nothing), down at the end.
  if (!invocation.start || (invocation.list && !invocation.fromCapabilities))
    return selectAndRun(invocation, cwd, secrets);
  try {
    return await withStartedAgent(invocation, cwd, () => selectAndRun(invocation, cwd, secrets));
  } catch (error) {
    return configurationFailure(error, false, secrets);
  }
}

/** The selection made and said (`--list` stops there), then the storyboards run by Vitest. */
async function selectAndRun(invocation: Invocation, cwd: string, secrets: readonly string[]): Promise<number> {
  let selection: Selection & { capabilityIds?: string[] };
  // A run whose storyboards the agent's capabilities select asks the agent first (select): Vitest loads meanwhile.
  // `--list` never loads it; with names given there is no wait to fill.
  if (!invocation.list && invocation.fromCapabilities) preloadRun();
  // The run's agent preflight, meanwhile too: the plugin takes it when the run starts, where its calls came after
  // Vitest's start and held the run's first calls (plugin/agent-preflight.ts). `--list` calls no more than it did.
  if (!invocation.list) {
    const { agentAccess, startPreflight } = await import('./plugin/agent-preflight.js');
    startPreflight(agentAccess(invocation.runtime));
  }
  try {
    selection = await select(invocation, invocation.list);
  } catch (error) {
    return configurationFailure(error, false, secrets);
  }
  if (invocation.list) {
    printSelection(selection, cwd, invocation.corpus);
    return 0;
  }
  // The run's first lines: the corpus and why this one, what runs, and why (--list has each storyboard). On stderr:
  // stdout may be a reporter's (`-- --reporter=json`).
  if (invocation.corpus) console.error(`vitest-adcp: ${corpusLine(invocation.corpus)}`);
  console.error(`vitest-adcp: ${selectionSummary(selection)}; --list shows each and why`);
  for (const note of selection.notes) console.error(`vitest-adcp: note: ${note}`);
  const plugin: AdcpStoryboardsOptions = {
    ...invocation.plugin,
    // The capability-selected ids as the plugin would have asked for them (compliance.fromCapabilities): it selects
    // the same files, in the same order, from them — without asking the agent a second time.
    compliance: {
      ...invocation.plugin.compliance,
      storyboards: [...(invocation.plugin.compliance?.storyboards ?? []), ...(selection.capabilityIds ?? [])],
    },
  };
  return runVitest(invocation, plugin, cwd, secrets);
}

process.exitCode = await main(process.argv.slice(2));
