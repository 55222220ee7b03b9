/**
 * The command line as a command: `--help`, `--version`, `init`, or a run and everything it needs (the agent, its
 * configuration, what to select, the reports, what goes to Vitest), every flag checked before anything runs.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_TIMEOUT_MS, envFlag, resolveRuntimeConfig, type ResolvedRuntimeConfig } from '../config.js';
import { prepareCorpus, resolveCorpus, type Corpus } from '../corpus.js';
import type { AgentStartOptions } from '../agent/agent-start.js';
import type { AdcpStoryboardsOptions } from '../plugin/plugin.js';
import { bundleIds } from '../storyboard/select.js';
import type { WebhookOptions } from '../webhooks/options.js';
import {
  agentUrl,
  authToken,
  commaList,
  concurrencyFlag,
  parseFlags,
  protocolFlag,
  startFlags,
  webhookOptions,
  type Flags,
} from './flags.js';
import { parseInit } from './init.js';
import { UsageError } from './usage-error.js';
import { vitestArguments, type VitestArguments } from './vitest-arguments.js';

export interface Invocation {
  url: string;
  plugin: AdcpStoryboardsOptions;
  /** The run's configuration as the plugin will resolve it (env fallbacks included). */
  runtime: ResolvedRuntimeConfig;
  /** What to select: the corpus, the names given, and whether the agent's capabilities choose. */
  corpusRoot?: string;
  /** The corpus taken from (when anything is), with why it is this one: said on the run's first line and by --list. */
  corpus?: Corpus;
  names: { storyboards: string[]; bundles: string[]; tracks: string[]; files: { given: string; file: string }[] };
  fromCapabilities: boolean;
  /** Run the corpus even when the agent's `adcp.supported_versions` leave its release out (`--allow-unsupported-version`). */
  allowUnsupportedVersion: boolean;
  report?: string;
  reportHtml?: string;
  reportMarkdown?: string;
  list: boolean;
  /** `--start`: the agent this command starts before it asks the agent anything, and stops at the end. */
  start?: AgentStartOptions;
  /** What goes to Vitest (the arguments after `--`). */
  vitest: VitestArguments;
}

export type Command =
  | { kind: 'help' }
  | { kind: 'version'; version?: string }
  | { kind: 'init'; file: string }
  | { kind: 'run'; invocation: Invocation };

export async function parse(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Command> {
  const dashes = argv.indexOf('--');
  const own = dashes === -1 ? argv : argv.slice(0, dashes);
  const forVitest = dashes === -1 ? [] : argv.slice(dashes + 1);
  if (own[0] === 'init') return parseInit(own.slice(1), forVitest, cwd);
  const { values, positionals } = parseFlags(own);
  if (values.help) return { kind: 'help' };
  const version = values['compliance-version'] ?? (env.ADCP_COMPLIANCE?.trim() || undefined);
  if (values.version) {
    // A published version the SDK lacks is fetched here, once: `--version` then says what a run would use.
    await prepareCorpus(version, cwd, { allowHttp: values['allow-http'] === true, env });
    return { kind: 'version', ...(version ? { version } : {}) };
  }
  return { kind: 'run', invocation: await runInvocation(values, positionals, forVitest, version, cwd, env) };
}

/** A run's invocation, its flags checked in the order they are reported. */
async function runInvocation(
  flags: Flags,
  positionals: string[],
  forVitest: string[],
  version: string | undefined,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<Invocation> {
  const url = agentUrl(positionals, flags['allow-http'] === true);
  const token = authToken(flags, cwd);
  const protocol = protocolFlag(flags);
  // The run's own check, env fallbacks included.
  const runtime = resolveRuntimeConfig(
    {
      agentUrl: url,
      protocol,
      authToken: token,
      timeoutMs: DEFAULT_TIMEOUT_MS,
      ...(flags['allow-http'] ? { allowHttp: true } : {}),
    },
    env,
  );
  if (runtime.error) throw new UsageError(runtime.error);
  const list = flags.list === true;
  if (list && forVitest.length > 0)
    throw new UsageError(
      `--list prints the storyboards that would run, without running Vitest: the arguments after -- (${forVitest.join(' ')}) do not apply to it; drop them, or drop --list`,
    );
  const vitest = await vitestArguments(forVitest);
  const start = startFlags(flags);
  const webhooks = webhookOptions(flags, env, cwd);
  // Every flag checked first: a download is not started for a command that would stop at a usage error.
  await prepareCorpus(version, cwd, { allowHttp: flags['allow-http'] === true, env });
  const { corpus, names, explicit } = namedStoryboards(flags, version, cwd);
  const corpusRoot = corpus?.root;
  return {
    url,
    runtime,
    corpusRoot,
    ...(corpus ? { corpus } : {}),
    names,
    fromCapabilities: !explicit,
    allowUnsupportedVersion: flags['allow-unsupported-version'] === true || envFlag(env.ADCP_ALLOW_UNSUPPORTED_VERSION),
    ...reportFiles(flags, cwd),
    list,
    ...(start ? { start } : {}),
    vitest,
    plugin: pluginOptions(flags, { url, runtime, authToken: token, names, version, webhooks }),
  };
}

/**
 * `--storyboards` and `--tracks`: the names given as storyboard ids, bundles and *.yaml files (each file checked to
 * exist), and the corpus when anything is taken from it (something not a file is named, or nothing is).
 */
function namedStoryboards(
  flags: Flags,
  version: string | undefined,
  cwd: string,
): { corpus: Corpus | undefined; names: Invocation['names']; explicit: boolean } {
  const names = commaList(flags.storyboards);
  const tracks = commaList(flags.tracks);
  const files: { given: string; file: string }[] = [];
  const storyboards: string[] = [];
  const bundles: string[] = [];
  const corpusWanted = names.some((n) => !/\.ya?ml$/.test(n)) || tracks.length > 0 || names.length === 0;
  const corpus = corpusWanted ? resolveCorpus(version, cwd) : undefined;
  const corpusRoot = corpus?.root;
  const known = new Set(corpusRoot ? bundleIds(corpusRoot) : []);
  for (const name of names) {
    if (/\.ya?ml$/.test(name)) {
      const file = resolve(cwd, name);
      if (!existsSync(file)) throw new UsageError(`--storyboards ${name}: no such file (${file})`);
      files.push({ given: name, file });
    } else if (known.has(name)) bundles.push(name);
    else storyboards.push(name);
  }
  const explicit = names.length > 0 || tracks.length > 0;
  return { corpus, names: { storyboards, bundles, tracks, files }, explicit };
}

/** `--report`, `--report-html`, `--report-markdown`: where each report goes, resolved from the current directory. */
function reportFiles(flags: Flags, cwd: string): Pick<Invocation, 'report' | 'reportHtml' | 'reportMarkdown'> {
  const reportHtml = flags['report-html'] === undefined ? undefined : resolve(cwd, flags['report-html']);
  const reportMarkdown = flags['report-markdown'] === undefined ? undefined : resolve(cwd, flags['report-markdown']);
  return {
    report: flags.report === undefined ? undefined : resolve(cwd, flags.report),
    ...(reportHtml ? { reportHtml } : {}),
    ...(reportMarkdown ? { reportMarkdown } : {}),
  };
}

/** The plugin's options for the run, before the selection is made. */
function pluginOptions(
  flags: Flags,
  run: {
    url: string;
    runtime: ResolvedRuntimeConfig;
    authToken: string | undefined;
    names: Invocation['names'];
    version: string | undefined;
    webhooks: WebhookOptions | undefined;
  },
): AdcpStoryboardsOptions {
  const { url, runtime, authToken, version, webhooks } = run;
  const { storyboards, bundles, tracks, files } = run.names;
  return {
    // Only the corpus (and the files named): the repository's own storyboards and tests are not this command's.
    include: [],
    files: files.map((f) => f.file),
    // The corpus ids are filled in once the selection is made (capabilities asked here, not by the plugin).
    compliance: { storyboards, bundles, tracks, ...(version ? { version } : {}) },
    ...(flags.sequential ? { sequential: true } : {}),
    ...(concurrencyFlag(flags) !== undefined ? { concurrency: concurrencyFlag(flags) } : {}),
    agent: {
      url,
      protocol: runtime.protocol,
      ...(authToken ? { auth: { token: authToken } } : {}),
      ...(flags['allow-http'] ? { allowHttp: true } : {}),
    },
    timeoutMs: DEFAULT_TIMEOUT_MS,
    ...(flags['skip-rate-abuse'] ? { signedRequests: { skipRateAbuse: true } } : {}),
    ...(flags['lenient-keys'] ? { strictKeys: false } : {}),
    ...(flags['requests-as-written'] ? { requests: 'as-written' as const } : {}),
    ...(flags['seeded-state'] ? { seededState: true } : {}),
    ...(flags['rate-limit-trip'] ? { runnerContracts: { rate_limit_trip_runner: true } } : {}),
    ...(webhooks ? { webhooks } : {}),
  };
}
