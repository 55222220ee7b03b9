#!/usr/bin/env node
/**
 * `npx vitest-adcp <agent-url>`: the storyboards an agent must pass, run as
 * Vitest tests, with no config file in the repository — for CI. Vitest runs
 * through its Node API with our plugin configured inline; the user's own
 * vitest/vite config is not loaded (`config: false`) and their own tests are
 * not collected.
 *
 * Exit status: 0 every step passed (or skipped), 1 a step failed, 2 a usage or
 * configuration error (nothing ran), 130/143 interrupted by SIGINT/SIGTERM (the
 * run was cancelled; the report, when asked for, has what ran).
 */
import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { ConfigurationError, DEFAULT_TIMEOUT_MS, resolveRuntimeConfig } from './config.js';
import { resolveCorpus } from './corpus.js';
import { adcpStoryboards, type AdcpStoryboardsOptions } from './plugin/plugin.js';
import { bundleIds } from './plugin/select.js';
import { sanitizeOutput, scrubSecrets, secretsInUrl } from './report/redact.js';
import AdcpReporter from './report/reporter.js';
import { resolveWebhookReceiver, type WebhookOptions } from './webhooks/options.js';

const USAGE = `Usage: npx vitest-adcp <agent-url> [options]

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
                             sales-guaranteed, …) or *.yaml files, comma-separated
  --tracks <tracks>          run every storyboard of these tracks (comma-separated),
                             instead of the capability-selected set
  --sequential               one storyboard at a time, in the reference runner's
                             order (as the official grader runs them), for agents
                             that keep state per brand or account; with --list,
                             lists them in that order
  --report <file.json>       also write the runner output contract JSON there
  --report-html <file>       with --report: the same report as one HTML file
                             (self-contained: open it from a CI artifact)
  --report-markdown <file>   with --report: the markdown summary (appended to
                             $GITHUB_STEP_SUMMARY too, whenever that is set)
  --allow-http               local development: allow a plain http:// URL that is
                             not loopback, and agent-supplied URLs (OAuth issuer,
                             A2A endpoint) over http or on private addresses
  --compliance-version <v>   corpus version of the installed @adcp/sdk, or a path
                             to a compliance tree (default: env ADCP_COMPLIANCE,
                             else the newest installed)
  --list                     print the storyboards that would run, and exit
  --skip-rate-abuse          signed_requests: do not send vector 020's 101 requests
                             (it grades unsatisfied_contract, rate_abuse_opt_out)
  --lenient-keys             load storyboards of a newer format version: unknown
                             keys and checks are warnings, not load errors
  --requests-as-written      send each sample_request as written (after
                             substitution): no request enrichment, no warnings
                             about it (env ADCP_REQUESTS=as-written)
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

Exit status: 0 passed, 1 a step failed, 2 usage or configuration error,
130/143 interrupted by SIGINT/SIGTERM: the run is cancelled (the step under way
finishes, the rest are not run) and --report is still written; a second signal
exits at once.`;

/** A usage or configuration error: printed without a stack, exit status 2. */
class UsageError extends ConfigurationError {}

interface Invocation {
  url: string;
  plugin: AdcpStoryboardsOptions;
  report?: string;
  /** With `report`: the HTML report and the markdown summary of the same run. */
  reportHtml?: string;
  reportMarkdown?: string;
  list: boolean;
}

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
  return (values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
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
    if (bytes.byteLength > MAX_AUTH_FILE_BYTES) throw new UsageError(`--auth-file ${path}: over ${MAX_AUTH_FILE_BYTES} bytes; it must hold the bearer token alone, on one line`);
    text = bytes.toString('utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--auth-file ${path}: cannot read it (${code ?? (error instanceof Error ? error.message : String(error))}); give a file holding the bearer token, or - to read it from stdin`);
  }
  const token = text.trim();
  if (token === '') throw new UsageError(`--auth-file ${path} is empty: it must hold the bearer token, on one line`);
  if (/[\r\n]/.test(token)) throw new UsageError(`--auth-file ${path} has more than one line: it must hold the bearer token alone, on one line`);
  return token;
}

function parse(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Invocation | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
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
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if ((values['report-html'] !== undefined || values['report-markdown'] !== undefined) && values.report === undefined) {
    throw new UsageError('--report-html and --report-markdown render the contract report: give --report <file.json> too');
  }
  if (positionals.length === 0) throw new UsageError('missing the agent URL, e.g. npx vitest-adcp http://127.0.0.1:3000/mcp');
  if (positionals.length > 1) throw new UsageError(`one agent URL, got ${positionals.length}: ${positionals.join(' ')} (storyboards go in --storyboards a,b)`);
  const url = positionals[0]!;
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw new UsageError(`"${url}" is not a URL: give the agent's MCP endpoint, e.g. https://agent.example.com/mcp`);
  }
  if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:') throw new UsageError(`"${url}" is not an http(s) URL: give the agent's MCP endpoint, e.g. https://agent.example.com/mcp`);
  if (parsedUrl.protocol === 'http:' && !isLoopback(parsedUrl.hostname) && !values['allow-http']) {
    throw new UsageError(`${url} is plain http to a host that is not loopback: agents must terminate TLS (use https://), or pass --allow-http for a development agent (results are then not publishable).`);
  }
  if (values.auth !== undefined && values['auth-file'] !== undefined) throw new UsageError('--auth and --auth-file both give the bearer token: give one (--auth-file keeps it out of the process list)');
  const authToken = values['auth-file'] !== undefined ? readAuthFile(values['auth-file'], cwd) : values.auth;
  const protocol = values.protocol;
  if (protocol !== undefined && protocol !== 'mcp' && protocol !== 'a2a') throw new UsageError(`--protocol is "${protocol}": use mcp or a2a`);
  // The run's own check, env fallbacks included.
  const runtime = resolveRuntimeConfig({ agentUrl: url, protocol, authToken, ...(values['allow-http'] ? { allowHttp: true } : {}) }, env);
  if (runtime.error) throw new UsageError(runtime.error);

  const version = values['compliance-version'] ?? (env.ADCP_COMPLIANCE?.trim() || undefined);
  const names = commaList(values.storyboards);
  const tracks = commaList(values.tracks);
  const files: string[] = [];
  const storyboards: string[] = [];
  const bundles: string[] = [];
  const corpusWanted = names.some((n) => !/\.ya?ml$/.test(n)) || tracks.length > 0 || names.length === 0;
  const known = new Set(corpusWanted ? bundleIds(resolveCorpus(version, cwd).root) : []);
  for (const name of names) {
    if (/\.ya?ml$/.test(name)) {
      const file = resolve(cwd, name);
      if (!existsSync(file)) throw new UsageError(`--storyboards ${name}: no such file (${file})`);
      files.push(file);
    } else if (known.has(name)) bundles.push(name);
    else storyboards.push(name);
  }
  const explicit = names.length > 0 || tracks.length > 0;
  const webhooks = webhookOptions(values, env);
  return {
    url,
    report: values.report === undefined ? undefined : resolve(cwd, values.report),
    ...(values['report-html'] !== undefined ? { reportHtml: resolve(cwd, values['report-html']) } : {}),
    ...(values['report-markdown'] !== undefined ? { reportMarkdown: resolve(cwd, values['report-markdown']) } : {}),
    list: values.list === true,
    plugin: {
      // Only the corpus (and the files named): the repository's own storyboards and tests are not this command's.
      include: [],
      files,
      compliance: { storyboards, bundles, tracks, fromCapabilities: !explicit, ...(version ? { version } : {}) },
      ...(values.sequential ? { sequential: true } : {}),
      agent: { url, protocol: runtime.protocol, ...(authToken ? { auth: { token: authToken } } : {}), ...(values['allow-http'] ? { allowHttp: true } : {}) },
      timeoutMs: DEFAULT_TIMEOUT_MS,
      ...(values['skip-rate-abuse'] ? { signedRequests: { skipRateAbuse: true } } : {}),
      ...(values['lenient-keys'] ? { strictKeys: false } : {}),
      ...(values['requests-as-written'] ? { requests: 'as-written' as const } : {}),
      ...(webhooks ? { webhooks } : {}),
    },
  };
}

/** The --webhook-* flags as plugin options, checked now so a bad setting is a usage error (exit 2). */
function webhookOptions(
  values: { 'webhook-receiver'?: boolean; 'webhook-base-url'?: string; 'webhook-port'?: string; 'webhook-allow-http'?: boolean },
  env: NodeJS.ProcessEnv,
): WebhookOptions | undefined {
  const port = values['webhook-port'];
  if (port !== undefined && !/^\d{1,5}$/.test(port)) throw new UsageError(`--webhook-port is "${port}": give a port number`);
  const options: WebhookOptions = {
    ...(values['webhook-receiver'] ? { receiver: values['webhook-base-url'] ? ('proxy' as const) : ('loopback' as const) } : {}),
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

/** Runs the command; resolves to the exit status. */
async function main(argv: string[], cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let invocation: Invocation | 'help';
  try {
    invocation = parse(argv, cwd, env);
  } catch (error) {
    return configurationFailure(error, error instanceof UsageError);
  }
  if (invocation === 'help') {
    console.log(USAGE);
    return 0;
  }
  const { createVitest, startVitest } = await import('vitest/node');
  const timeout = (invocation.plugin.timeoutMs ?? DEFAULT_TIMEOUT_MS) * VITEST_TIMEOUT_PER_STEP_TIMEOUT;
  const options = {
    config: false as const,
    root: cwd,
    watch: false,
    run: true,
    include: [],
    passWithNoTests: false,
    testTimeout: timeout,
    hookTimeout: timeout,
    reporters: ['default', ...(invocation.report ? [new AdcpReporter({ outputFile: invocation.report, htmlFile: invocation.reportHtml, markdownFile: invocation.reportMarkdown })] : [])],
  };
  const overrides = { plugins: [adcpStoryboards(invocation.plugin)] };
  try {
    if (invocation.list) {
      const vitest = await createVitest('test', options, overrides);
      try {
        const specs = await vitest.globTestSpecifications();
        // --sequential: in the order they would run (the run's own sequencer, the plugin's order); else by path.
        const files = invocation.plugin.sequential ? (await new vitest.config.sequence.sequencer(vitest).sort(specs)).map((s) => s.moduleId) : specs.map((s) => s.moduleId).sort();
        printSelection(files, cwd);
      } finally {
        await vitest.close();
      }
      return 0;
    }
    const interruption = new Interruption();
    let vitest;
    try {
      vitest = await startVitest('test', [], options, { plugins: [...overrides.plugins, interruption.plugin()] });
    } finally {
      interruption.stopListening();
    }
    const failed = vitest.state.getCountOfFailedTests() > 0 || vitest.state.getUnhandledErrors().length > 0 || Number(process.exitCode ?? 0) !== 0;
    const code = interruption.exitCode ?? (failed ? 1 : 0);
    // Set before exit(): as under `vitest run`, a handle left open cannot keep CI waiting past
    // teardownTimeout — Vitest then ends the process with this status.
    process.exitCode = code;
    await vitest.exit();
    return code;
  } catch (error) {
    const plugin = invocation.plugin;
    return configurationFailure(error, false, [plugin.agent?.auth?.token ?? env.ADCP_AUTH_TOKEN ?? '', ...secretsInUrl(invocation.url)]);
  }
}

/** The exit status of a run ended by a signal, as a shell reports it: 128 + the signal's number. */
const SIGNAL_EXIT: Record<'SIGINT' | 'SIGTERM', number> = { SIGINT: 130, SIGTERM: 143 };

/**
 * SIGINT/SIGTERM during a run. Vitest's own handlers exit the process at once, so the reporters never end the run and
 * no report is written: they are replaced, as soon as Vitest exists (its \`configureVitest\` hook), by these. The first
 * signal cancels the run the way Vitest's own cancel key does (\`cancelCurrentRun\`: the steps under way finish, the
 * rest are not run) and the run ends normally — every reporter's end, the contract report with what ran — with
 * 128 + the signal's number; a second signal exits at once. Before Vitest exists (the capability check), a signal
 * exits at once: nothing ran.
 */
class Interruption {
  /** Set by the first signal: the status the run exits with. */
  exitCode: number | undefined;
  private vitest: { cancelCurrentRun(reason: never): Promise<void> } | undefined;
  private readonly handler = (signal: NodeJS.Signals) => this.onSignal(signal);
  private readonly theirs = new Set<(...args: unknown[]) => void>();

  constructor() {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      for (const listener of process.listeners(signal)) this.theirs.add(listener as (...args: unknown[]) => void);
      process.on(signal, this.handler);
    }
  }

  /** The plugin that hands us the run's Vitest and takes Vitest's own signal handlers away. */
  plugin(): { name: string; configureVitest(context: { vitest: { cancelCurrentRun(reason: never): Promise<void> } }): void } {
    return {
      name: 'vitest-adcp:interruption',
      configureVitest: ({ vitest }) => {
        this.vitest ??= vitest;
        for (const signal of ['SIGINT', 'SIGTERM'] as const) {
          for (const listener of process.listeners(signal)) {
            if (listener !== this.handler && !this.theirs.has(listener as (...args: unknown[]) => void)) process.off(signal, listener as (...args: unknown[]) => void);
          }
        }
      },
    };
  }

  private onSignal(signal: NodeJS.Signals): void {
    const code = SIGNAL_EXIT[signal as keyof typeof SIGNAL_EXIT] ?? 1;
    if (this.exitCode !== undefined || !this.vitest) {
      // A second signal, or one before the run: at once.
      process.exit(this.exitCode ?? code);
    }
    this.exitCode = code;
    process.exitCode = code;
    console.error(`vitest-adcp: ${signal}: cancelling the run (the steps under way finish, the rest are not run); the report is still written. Send it again to exit at once.`);
    void this.vitest.cancelCurrentRun('keyboard-input' as never).catch(() => {});
  }

  /**
   * After the run. Not interrupted: a signal is Node's again (it ends the process). Interrupted: the handler stays, so
   * a second signal still exits at once while Vitest closes.
   */
  stopListening(): void {
    if (this.exitCode === undefined) for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, this.handler);
  }
}

/** One line per storyboard file, in the order given: its id and its path. */
function printSelection(files: string[], cwd: string): void {
  for (const file of files) {
    let id: unknown;
    try {
      id = parseYaml(readFileSync(file, 'utf8'))?.id;
    } catch {
      // Listed all the same: the run would report why it does not load.
    }
    console.log(`${typeof id === 'string' ? id : '-'}\t${relative(cwd, file)}`);
  }
}

/** The exit-2 message: it can quote an agent (a capability call it failed), so scrubbed and sanitised like any output. */
function configurationFailure(error: unknown, usage: boolean, secrets: readonly string[] = []): number {
  const safe = (text: string) => sanitizeOutput(scrubSecrets(text, secrets));
  if (error instanceof ConfigurationError) {
    console.error(safe(`vitest-adcp: ${error.message}${usage ? '\nRun `npx vitest-adcp --help` for the options.' : ''}`));
  } else {
    console.error(safe(`vitest-adcp: could not start the run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
  }
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
