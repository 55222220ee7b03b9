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
import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Reporter } from 'vitest/node';
import { defaultCacheDir } from './cache/location.js';
import { init, parseInit } from './cli/init.js';
import { Interruption } from './cli/interruption.js';
import { explainSelection, selectionSummary, type Selection } from './cli/selection.js';
import { UsageError } from './cli/usage-error.js';
import { printVersions } from './cli/version.js';
import { ConfigurationError } from './model/errors.js';
import { DEFAULT_TIMEOUT_MS, resolveRuntimeConfig, type RuntimeConfig } from './config.js';
import { resolveCorpus } from './corpus.js';
import type { AdcpStoryboardsOptions } from './plugin/plugin.js';
import { bundleIds } from './storyboard/select.js';
import { sanitizeOutput, scrubSecrets, secretsInUrl } from './model/redact.js';
import { resolveWebhookReceiver, type WebhookOptions } from './webhooks/options.js';

const USAGE = `Usage: npx vitest-adcp <agent-url> [options] [-- <Vitest options>]
       npx vitest-adcp init [file.storyboard.yaml]
       npx vitest-adcp --version

Runs the AdCP compliance storyboards an agent must pass as Vitest tests. By
default the agent's get_adcp_capabilities chooses them, as
\`npx adcp storyboard run <agent-url>\` does: universal, a bundle per declared
protocol, each declared specialism, and the scenarios those require.

Options:
  --auth <token>             Bearer token for the agent (default: env ADCP_AUTH_TOKEN).
                             Visible to other local users in the process list
                             (ps) for the whole run: prefer --auth-file or the env
  --auth-file <path>         read the bearer token from this file, or from stdin
                             with \`--auth-file -\` (one line; neither it nor env
                             ADCP_AUTH_TOKEN shows in the process list)
  --protocol <mcp|a2a>       how to reach the agent (default: env ADCP_PROTOCOL, else mcp);
                             for a2a the URL is where its agent card is, e.g.
                             http://127.0.0.1:3000/a2a
  --storyboards <names>      run these instead of the capability-selected set:
                             storyboard ids, bundles (universal, media-buy,
                             sales-guaranteed, …) or *.yaml files, comma-separated.
                             A bundle's baseline id (media_buy_seller) runs with the
                             scenarios it requires; its bundle (media-buy) runs what
                             capability selection runs for that protocol
  --tracks <tracks>          run every storyboard of these tracks (comma-separated),
                             instead of the capability-selected set
  --sequential               one storyboard at a time, in the reference runner's
                             order (as the official grader runs them), for agents
                             that keep state per brand or account; with --list,
                             lists them in that order
  --report <file.json>       also write the runner output contract JSON there
  --report-html <file>       the same report as one HTML file (self-contained:
                             open it from a CI artifact)
  --report-markdown <file>   the markdown summary (appended to $GITHUB_STEP_SUMMARY
                             too, whenever that is set)
  --allow-http               local development: allow a plain http:// URL that is
                             not loopback, and agent-supplied URLs (OAuth issuer,
                             A2A endpoint) over http or on private addresses
  --compliance-version <v>   corpus version of the installed @adcp/sdk, or a path
                             to a compliance tree (default: env ADCP_COMPLIANCE,
                             else the newest installed)
  --list                     print the storyboards that would run, each with why
                             (capabilities, named, required scenario of …) and a
                             count, without running anything, and exit
  --skip-rate-abuse          signed_requests: do not send vector 020's 101 requests
                             (it grades unsatisfied_contract, rate_abuse_opt_out)
  --lenient-keys             load storyboards of a newer format version: unknown
                             keys and checks are warnings, not load errors
  --requests-as-written      send each sample_request as written (after
                             substitution): no request enrichment, no warnings
                             about it (env ADCP_REQUESTS=as-written)
  --version                  print the versions of vitest-adcp, Vitest, @adcp/sdk
                             and its compliance corpus, and exit
  -h, --help                 this text

Webhooks (expect_webhook* steps, {{runner.webhook_url}}; without a receiver
they grade not_applicable):
  --webhook-receiver         host a receiver on 127.0.0.1 (an ephemeral port),
                             for an agent on this machine
  --webhook-base-url <url>   proxy mode: the public https URL that routes to the
                             receiver (default: env ADCP_RUNNER_WEBHOOK_BASE_URL)
  --webhook-port <n>         the port the receiver listens on (proxy mode needs
                             one; default: env ADCP_RUNNER_WEBHOOK_PORT)
  --webhook-allow-http       local development only: accept an http:// base URL

Vitest: everything after -- goes to Vitest, as to \`vitest run\`, e.g.
  -- -t '\\(get_capabilities\\)'      only the steps whose test name matches
  -- --bail 1                        stop after the first failed step
  -- --reporter=default --reporter=junit --outputFile junit.xml
                                     JUnit XML too (a --reporter replaces the
                                     default reporter: name it to keep it)
  -- media-buy                       only the storyboard files whose path has it
  --watch, --config, --root, --dir, --ui and --standalone do not apply: this
  command runs once, from here, without a config.

A storyboard of your own:
  init [file]                write a starter storyboard there (default
                             ./agent.storyboard.yaml; an existing file is never
                             overwritten), then run it with --storyboards <file>

Exit status: 0 passed, 1 a step failed, 2 usage or configuration error (the
agent unreachable or refusing the credentials included: nothing ran),
130/143 interrupted by SIGINT/SIGTERM: the run is cancelled (the step under way
finishes, the rest are not run) and --report is still written; a second signal
exits at once.`;

interface Invocation {
  url: string;
  plugin: AdcpStoryboardsOptions;
  /** The run's configuration as the plugin will resolve it (env fallbacks included). */
  runtime: RuntimeConfig;
  /** What to select: the corpus, the names given, and whether the agent's capabilities choose. */
  corpusRoot?: string;
  names: { storyboards: string[]; bundles: string[]; tracks: string[]; files: { given: string; file: string }[] };
  fromCapabilities: boolean;
  report?: string;
  reportHtml?: string;
  reportMarkdown?: string;
  list: boolean;
  /** What goes to Vitest (the arguments after `--`). */
  vitest: { options: Record<string, unknown>; filters: string[] };
}

type Command =
  | { kind: 'help' }
  | { kind: 'version'; version?: string }
  | { kind: 'init'; file: string }
  | { kind: 'run'; invocation: Invocation };

/**
 * A test waits for its step's calls to the agent, each bounded by `timeoutMs`;
 * one `it` can wait for several (a branch set settles through its peers;
 * seeding and polling add calls). Vitest's own timer is only a backstop, so it
 * must never fire before the step's bound has produced a verdict.
 */
const VITEST_TIMEOUT_PER_STEP_TIMEOUT = 4;

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function commaList(values: string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** The most a token file (or stdin) may hold: a bearer token is a line, not a file. */
const MAX_AUTH_FILE_BYTES = 64 * 1024;

/**
 * `--auth-file <path>` (`-`: stdin): the token as its one line, so it never sits in the process list as `--auth`
 * does. Surrounding whitespace and the final newline are not part of it.
 */
function readAuthFile(path: string, cwd: string): string {
  let text: string;
  try {
    // fd 0 for `-`: stdin read whole (a pipe, a here-string, a redirected file).
    const bytes = readFileSync(path === '-' ? 0 : resolve(cwd, path));
    if (bytes.byteLength > MAX_AUTH_FILE_BYTES)
      throw new UsageError(
        `--auth-file ${path}: over ${MAX_AUTH_FILE_BYTES} bytes; it must hold the bearer token alone, on one line`,
      );
    text = bytes.toString('utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `--auth-file ${path}: cannot read it (${code ?? (error instanceof Error ? error.message : String(error))}); give a file holding the bearer token, or - to read it from stdin`,
    );
  }
  const token = text.trim();
  if (token === '') throw new UsageError(`--auth-file ${path} is empty: it must hold the bearer token, on one line`);
  if (/[\r\n]/.test(token))
    throw new UsageError(
      `--auth-file ${path} has more than one line: it must hold the bearer token alone, on one line`,
    );
  return token;
}

/**
 * Vitest's Node API, imported only when it is needed (a run, or arguments after `--`): `--list`, `--help`,
 * `--version` and `init` never load it. Vitest is an optional peer: without it, a usage error that says so.
 */
async function importVitest(): Promise<typeof import('vitest/node')> {
  try {
    return await import('vitest/node');
  } catch (error) {
    if (
      (error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' ||
      !/'vitest'/.test(String((error as Error).message))
    )
      throw error;
    throw new UsageError(
      `Vitest is not installed where vitest-adcp is, and the storyboards run as Vitest tests: install it beside vitest-adcp (npm install -D vitest), or run npx vitest-adcp from a project that has it (${(error as Error).message.split('\n')[0]})`,
    );
  }
}

/** The flags of the command itself (before `--`). */
const OPTIONS = {
  auth: { type: 'string' },
  'auth-file': { type: 'string' },
  protocol: { type: 'string' },
  storyboards: { type: 'string', multiple: true },
  tracks: { type: 'string', multiple: true },
  report: { type: 'string' },
  'report-html': { type: 'string' },
  'report-markdown': { type: 'string' },
  'allow-http': { type: 'boolean' },
  'compliance-version': { type: 'string' },
  list: { type: 'boolean' },
  sequential: { type: 'boolean' },
  'webhook-receiver': { type: 'boolean' },
  'webhook-base-url': { type: 'string' },
  'webhook-port': { type: 'string' },
  'webhook-allow-http': { type: 'boolean' },
  'skip-rate-abuse': { type: 'boolean' },
  'lenient-keys': { type: 'boolean' },
  'requests-as-written': { type: 'boolean' },
  version: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Vitest options that make no sense for a one-off run without a config: refused, with what to do instead. */
const NOT_FOR_THIS_COMMAND: Record<string, string> = {
  watch: '--watch',
  w: '--watch',
  config: '--config',
  c: '--config',
  root: '--root',
  r: '--root',
  dir: '--dir',
  ui: '--ui',
  standalone: '--standalone',
};

/**
 * The arguments after `--`, read by Vitest's own parser (`parseCLI`, what `vitest run <args>` reads them with): its
 * options, and its file filters.
 */
async function vitestArguments(args: string[]): Promise<Invocation['vitest']> {
  if (args.length === 0) return { options: {}, filters: [] };
  const { parseCLI } = await importVitest();
  let parsed: ReturnType<typeof parseCLI>;
  try {
    parsed = parseCLI(['vitest', 'run', ...args]);
  } catch (error) {
    throw new UsageError(
      `after --: ${error instanceof Error ? error.message : String(error)} (the arguments after -- are Vitest's, as for \`vitest run\`)`,
    );
  }
  const options: Record<string, unknown> = { ...parsed.options };
  // Not options: the parser's own bookkeeping, and its defaults for what was not given.
  delete options['--'];
  delete options.run;
  if (options.color === true) delete options.color;
  for (const key of Object.keys(options)) {
    const flag = NOT_FOR_THIS_COMMAND[key];
    if (flag)
      throw new UsageError(
        `-- ${flag}: this command runs the storyboards once, from the current directory, without a Vitest config, so ${flag} does not apply. For it, add the plugin to your vitest.config.ts (README, "Quick start") and run Vitest itself`,
      );
  }
  return { options, filters: parsed.filter };
}

async function parse(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Command> {
  const dashes = argv.indexOf('--');
  const own = dashes === -1 ? argv : argv.slice(0, dashes);
  const forVitest = dashes === -1 ? [] : argv.slice(dashes + 1);
  if (own[0] === 'init') return parseInit(own.slice(1), forVitest, cwd);
  let parsed;
  try {
    parsed = parseArgs({ args: own, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  const version = values['compliance-version'] ?? (env.ADCP_COMPLIANCE?.trim() || undefined);
  if (values.version) return { kind: 'version', ...(version ? { version } : {}) };
  if (positionals.length === 0)
    throw new UsageError('missing the agent URL, e.g. npx vitest-adcp http://127.0.0.1:3000/mcp');
  if (positionals.length > 1)
    throw new UsageError(
      `one agent URL, got ${positionals.length}: ${positionals.join(' ')} (storyboards go in --storyboards a,b; Vitest's options after --, e.g. -- -t pattern)`,
    );
  const url = positionals[0]!;
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw new UsageError(`"${url}" is not a URL: give the agent's MCP endpoint, e.g. https://agent.example.com/mcp`);
  }
  if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:')
    throw new UsageError(
      `"${url}" is not an http(s) URL: give the agent's MCP endpoint, e.g. https://agent.example.com/mcp`,
    );
  if (parsedUrl.protocol === 'http:' && !isLoopback(parsedUrl.hostname) && !values['allow-http']) {
    throw new UsageError(
      `${url} is plain http to a host that is not loopback: agents must terminate TLS (use https://), or pass --allow-http for a development agent (results are then not publishable).`,
    );
  }
  if (values.auth !== undefined && values['auth-file'] !== undefined)
    throw new UsageError(
      '--auth and --auth-file both give the bearer token: give one (--auth-file keeps it out of the process list)',
    );
  const authToken = values['auth-file'] !== undefined ? readAuthFile(values['auth-file'], cwd) : values.auth;
  const protocol = values.protocol;
  if (protocol !== undefined && protocol !== 'mcp' && protocol !== 'a2a')
    throw new UsageError(`--protocol is "${protocol}": use mcp or a2a`);
  // The run's own check, env fallbacks included.
  const runtime = resolveRuntimeConfig(
    {
      agentUrl: url,
      protocol,
      authToken,
      timeoutMs: DEFAULT_TIMEOUT_MS,
      ...(values['allow-http'] ? { allowHttp: true } : {}),
    },
    env,
  );
  if (runtime.error) throw new UsageError(runtime.error);
  const list = values.list === true;
  if (list && forVitest.length > 0)
    throw new UsageError(
      `--list prints the storyboards that would run, without running Vitest: the arguments after -- (${forVitest.join(' ')}) do not apply to it; drop them, or drop --list`,
    );
  const vitest = await vitestArguments(forVitest);

  const names = commaList(values.storyboards);
  const tracks = commaList(values.tracks);
  const files: { given: string; file: string }[] = [];
  const storyboards: string[] = [];
  const bundles: string[] = [];
  const corpusWanted = names.some((n) => !/\.ya?ml$/.test(n)) || tracks.length > 0 || names.length === 0;
  const corpusRoot = corpusWanted ? resolveCorpus(version, cwd).root : undefined;
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
  const webhooks = webhookOptions(values, env);
  const reportHtml = values['report-html'] === undefined ? undefined : resolve(cwd, values['report-html']);
  const reportMarkdown = values['report-markdown'] === undefined ? undefined : resolve(cwd, values['report-markdown']);
  return {
    kind: 'run',
    invocation: {
      url,
      runtime,
      corpusRoot,
      names: { storyboards, bundles, tracks, files },
      fromCapabilities: !explicit,
      report: values.report === undefined ? undefined : resolve(cwd, values.report),
      ...(reportHtml ? { reportHtml } : {}),
      ...(reportMarkdown ? { reportMarkdown } : {}),
      list,
      vitest,
      plugin: {
        // Only the corpus (and the files named): the repository's own storyboards and tests are not this command's.
        include: [],
        files: files.map((f) => f.file),
        // The corpus ids are filled in once the selection is made (capabilities asked here, not by the plugin).
        compliance: { storyboards, bundles, tracks, ...(version ? { version } : {}) },
        ...(values.sequential ? { sequential: true } : {}),
        agent: {
          url,
          protocol: runtime.protocol,
          ...(authToken ? { auth: { token: authToken } } : {}),
          ...(values['allow-http'] ? { allowHttp: true } : {}),
        },
        timeoutMs: DEFAULT_TIMEOUT_MS,
        ...(values['skip-rate-abuse'] ? { signedRequests: { skipRateAbuse: true } } : {}),
        ...(values['lenient-keys'] ? { strictKeys: false } : {}),
        ...(values['requests-as-written'] ? { requests: 'as-written' as const } : {}),
        ...(webhooks ? { webhooks } : {}),
      },
    },
  };
}

/** The --webhook-* flags as plugin options, checked now so a bad setting is a usage error (exit 2). */
function webhookOptions(
  values: {
    'webhook-receiver'?: boolean;
    'webhook-base-url'?: string;
    'webhook-port'?: string;
    'webhook-allow-http'?: boolean;
  },
  env: NodeJS.ProcessEnv,
): WebhookOptions | undefined {
  const port = values['webhook-port'];
  if (port !== undefined && !/^\d{1,5}$/.test(port))
    throw new UsageError(`--webhook-port is "${port}": give a port number`);
  const options: WebhookOptions = {
    ...(values['webhook-receiver']
      ? { receiver: values['webhook-base-url'] ? ('proxy' as const) : ('loopback' as const) }
      : {}),
    ...(values['webhook-base-url'] ? { publicBaseUrl: values['webhook-base-url'] } : {}),
    ...(port !== undefined ? { port: Number(port) } : {}),
    ...(values['webhook-allow-http'] ? { allowHttpBaseUrl: true } : {}),
  };
  try {
    if (!resolveWebhookReceiver(options, env)) return undefined;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  return options;
}

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
  cwd: string,
  warnMissingScenarios: boolean,
): Promise<Selection & { capabilityIds?: string[] }> {
  let capabilityIds: string[] | undefined;
  if (invocation.fromCapabilities && invocation.corpusRoot) {
    const { storyboardIdsForAgent } = await import('./plugin/capabilities.js');
    const { runtime } = invocation;
    capabilityIds = await storyboardIdsForAgent(
      {
        url: runtime.agentUrl!,
        protocol: runtime.protocol,
        authToken: runtime.authToken,
        timeoutMs: runtime.timeoutMs!,
        maxResponseBytes: runtime.maxResponseBytes!,
        allowHttp: runtime.allowHttp,
      },
      invocation.corpusRoot,
      // Where the plugin keeps its caches by default (cache/location.ts): Vite's cache directory of this project.
      { fromDir: cwd, cacheDir: defaultCacheDir(cwd, 'node_modules/.vite') },
    );
  }
  const selection = explainSelection({
    ...(invocation.corpusRoot ? { corpusRoot: invocation.corpusRoot } : {}),
    ...invocation.names,
    ...(capabilityIds ? { capabilityIds } : {}),
    sequential: invocation.plugin.sequential === true,
    ...(warnMissingScenarios ? { warn: (message: string) => console.warn(`[vitest-adcp] ${message}`) } : {}),
  });
  return { ...selection, ...(capabilityIds ? { capabilityIds } : {}) };
}

/** `--list`: one line per storyboard, `id<TAB>path<TAB>why`, then the notes and the count. */
function printSelection(selection: Selection, cwd: string): void {
  for (const storyboard of selection.storyboards)
    console.log(`${storyboard.id}\t${relative(cwd, storyboard.file)}\t${storyboard.reasons.join('; ')}`);
  for (const note of selection.notes) console.log(`note: ${note}`);
  console.log(selectionSummary(selection));
}

/** The reporters of the run: Vitest's (or those named after `--`), and the contract report and its views when asked for. */
async function reporters(invocation: Invocation, cwd: string): Promise<unknown[]> {
  const named = invocation.vitest.options.reporter;
  const theirs =
    named === undefined
      ? ['default']
      : ([] as unknown[]).concat(named).map((r) => (typeof r === 'string' && /^\.\.?\//.test(r) ? resolve(cwd, r) : r));
  const ours: Reporter[] = [];
  if (invocation.report) {
    const { default: AdcpReporter } = await import('./report/reporter.js');
    ours.push(
      new AdcpReporter({
        outputFile: invocation.report,
        htmlFile: invocation.reportHtml,
        markdownFile: invocation.reportMarkdown,
      }),
    );
  } else if (invocation.reportHtml || invocation.reportMarkdown) {
    const { ReportViewsReporter } = await import('./cli/views-reporter.js');
    ours.push(new ReportViewsReporter({ htmlFile: invocation.reportHtml, markdownFile: invocation.reportMarkdown }));
  }
  return [...theirs, ...ours];
}

/** A configuration error, however it reached us (thrown here, by the plugin, or by a global setup in Vitest's module graph). */
function isConfigurationError(error: unknown): error is Error {
  return error instanceof ConfigurationError || (error instanceof Error && /ConfigurationError$/.test(error.name));
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
  const { invocation } = command;
  const secrets = runSecrets(invocation, env);
  let selection: Selection & { capabilityIds?: string[] };
  try {
    selection = await select(invocation, cwd, invocation.list);
  } catch (error) {
    return configurationFailure(error, false, secrets);
  }
  if (invocation.list) {
    printSelection(selection, cwd);
    return 0;
  }
  // The run's first lines: what runs, and why (--list has each storyboard). On stderr: stdout may be a reporter's
  // (`-- --reporter=json`).
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
  const timeout = (plugin.timeoutMs ?? DEFAULT_TIMEOUT_MS) * VITEST_TIMEOUT_PER_STEP_TIMEOUT;
  const { reporter: _named, ...theirs } = invocation.vitest.options;
  let vitestApi: typeof import('vitest/node');
  let runReporters: unknown[];
  try {
    vitestApi = await importVitest();
    runReporters = await reporters(invocation, cwd);
  } catch (error) {
    return configurationFailure(error, false, secrets);
  }
  const interruption = new Interruption();
  const options = {
    testTimeout: timeout,
    hookTimeout: timeout,
    passWithNoTests: false,
    // Vitest's options after `--` (-t, --bail, --outputFile, …), over the defaults above, never over what makes this command.
    ...theirs,
    config: false as const,
    root: cwd,
    watch: false,
    run: true,
    include: [],
    reporters: [...runReporters, interruption.reporter()],
  };
  const { createVitest } = vitestApi;
  const { adcpStoryboards } = await import('./plugin/plugin.js');
  let vitest: Awaited<ReturnType<typeof createVitest>>;
  try {
    vitest = await createVitest('test', options as Parameters<typeof createVitest>[1], {
      plugins: [adcpStoryboards(plugin), interruption.plugin()],
    });
  } catch (error) {
    interruption.stopListening();
    return configurationFailure(error, false, secrets);
  }
  // As startVitest runs it, but a configuration error from the run's start — the plugin's preflight (agent-preflight.ts:
  // an unreachable agent, refused credentials), thrown as the run starts or from the storyboard project's global
  // setup — is this command's exit 2 with its one message, not a stack under "Unhandled Error" and exit 1.
  let stopped: Error | undefined;
  try {
    await vitest.start(invocation.vitest.filters);
  } catch (error) {
    if (isConfigurationError(error)) stopped = error;
    else if ((error as { code?: unknown })?.code !== 'VITEST_FILES_NOT_FOUND') {
      process.exitCode = 1;
      vitest.logger.printError(error, { fullStack: true, type: 'Unhandled Error' });
    }
  } finally {
    interruption.stopListening();
  }
  const failed =
    vitest.state.getCountOfFailedTests() > 0 ||
    vitest.state.getUnhandledErrors().length > 0 ||
    Number(process.exitCode ?? 0) !== 0;
  const code = stopped ? configurationFailure(stopped, false, secrets) : (interruption.exitCode ?? (failed ? 1 : 0));
  // Set before exit(): as under `vitest run`, a handle left open cannot keep CI waiting past
  // teardownTimeout — Vitest then ends the process with this status.
  process.exitCode = code;
  await vitest.exit();
  return code;
}

/** The exit-2 message: it can quote an agent (a capability call it failed), so scrubbed and sanitised like any output. */
function configurationFailure(error: unknown, usage: boolean, secrets: readonly string[] = []): number {
  const safe = (text: string) => sanitizeOutput(scrubSecrets(text, secrets));
  if (isConfigurationError(error)) {
    // A message of the plugin's own may name us already (preflight: "vitest-adcp cannot run the storyboards: …").
    const message = /^vitest-adcp\b/.test(error.message) ? error.message : `vitest-adcp: ${error.message}`;
    console.error(safe(`${message}${usage ? '\nRun `npx vitest-adcp --help` for the options.' : ''}`));
  } else {
    console.error(
      safe(
        `vitest-adcp: could not start the run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      ),
    );
  }
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
