/**
 * The flags of the command itself (before `--`), read with node:util's parseArgs, and each checked as it is read: a
 * bad one is a usage error (exit 2) before anything runs.
 */
import { parseArgs } from 'node:util';
import { isLoopbackHost } from '../model/addresses.js';
import { absoluteJwksLocation, signerJwksLocationProblem } from '../webhooks/operator-jwks.js';
import type { AgentStartOptions } from '../agent/agent-start.js';
import { resolveWebhookReceiver, type WebhookOptions } from '../webhooks/options.js';
import { readAuthFile } from './auth-file.js';
import { UsageError } from './usage-error.js';

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
  'allow-unsupported-version': { type: 'boolean' },
  'compliance-version': { type: 'string' },
  list: { type: 'boolean' },
  sequential: { type: 'boolean' },
  concurrency: { type: 'string' },
  'webhook-receiver': { type: 'boolean' },
  'webhook-base-url': { type: 'string' },
  'webhook-port': { type: 'string' },
  'webhook-allow-http': { type: 'boolean' },
  'webhook-signer-jwks': { type: 'string' },
  'skip-rate-abuse': { type: 'boolean' },
  'lenient-keys': { type: 'boolean' },
  'requests-as-written': { type: 'boolean' },
  'seeded-state': { type: 'boolean' },
  'rate-limit-trip': { type: 'boolean' },
  start: { type: 'string' },
  'start-timeout': { type: 'string' },
  version: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The flags as parseArgs reads them. */
export type Flags = ReturnType<typeof parseFlags>['values'];

/** The command's own arguments as flags and positionals: an unknown flag or a missing value is a usage error. */
export function parseFlags(args: string[]) {
  try {
    return parseArgs({ args, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export function commaList(values: string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** The one positional, the agent's URL: http(s), and plain http only to a loopback host unless `--allow-http`. */
export function agentUrl(positionals: string[], allowHttp: boolean): string {
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
  if (parsedUrl.protocol === 'http:' && !isLoopbackHost(parsedUrl.hostname) && !allowHttp) {
    throw new UsageError(
      `${url} is plain http to a host that is not loopback: agents must terminate TLS (use https://), or pass --allow-http for a development agent (results are then not publishable).`,
    );
  }
  return url;
}

/** The bearer token of `--auth` or `--auth-file` (one of them at most); undefined when neither is given. */
export function authToken(flags: Flags, cwd: string): string | undefined {
  if (flags.auth !== undefined && flags['auth-file'] !== undefined)
    throw new UsageError(
      '--auth and --auth-file both give the bearer token: give one (--auth-file keeps it out of the process list)',
    );
  return flags['auth-file'] !== undefined ? readAuthFile(flags['auth-file'], cwd) : flags.auth;
}

/** `--protocol`: mcp or a2a; undefined when not given. */
export function protocolFlag(flags: Flags): 'mcp' | 'a2a' | undefined {
  const protocol = flags.protocol;
  if (protocol !== undefined && protocol !== 'mcp' && protocol !== 'a2a')
    throw new UsageError(`--protocol is "${protocol}": use mcp or a2a`);
  return protocol;
}

/** `--concurrency <n>`: storyboards in flight at once (a whole number of 1 or more); undefined when not given. */
export function concurrencyFlag(flags: Flags): number | undefined {
  const value = flags.concurrency;
  if (value === undefined) return undefined;
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1)
    throw new UsageError(
      `--concurrency is "${value}": give how many storyboards run at once, 1 or more (1: one after another)`,
    );
  return Number(value);
}

/** `--start "<command>"` and `--start-timeout <ms>`: the agent the run starts (agent/agent-start.ts); undefined without `--start`. */
export function startFlags(flags: Flags): AgentStartOptions | undefined {
  const command = flags.start;
  const timeout = flags['start-timeout'];
  if (command === undefined) {
    if (timeout !== undefined)
      throw new UsageError(
        '--start-timeout bounds how long the agent started by --start has to answer: give --start "<command>" too',
      );
    return undefined;
  }
  if (command.trim() === '')
    throw new UsageError('--start is empty: give the command that starts the agent, e.g. --start "npm run dev"');
  if (timeout !== undefined && (!/^\d{1,9}$/.test(timeout) || Number(timeout) < 1))
    throw new UsageError(
      `--start-timeout is "${timeout}": give how long the agent has to answer, in ms (default 60000)`,
    );
  return { command, ...(timeout !== undefined ? { timeoutMs: Number(timeout) } : {}) };
}

/** The --webhook-* flags as plugin options, checked now so a bad setting is a usage error (exit 2). */
export function webhookOptions(
  values: {
    'webhook-receiver'?: boolean;
    'webhook-base-url'?: string;
    'webhook-port'?: string;
    'webhook-allow-http'?: boolean;
    'webhook-signer-jwks'?: string;
    'allow-http'?: boolean;
  },
  env: NodeJS.ProcessEnv,
  cwd: string,
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
    const receiver = resolveWebhookReceiver(options, env);
    const signerJwks = signerJwksFlag(values, cwd);
    if (signerJwks) return { ...options, signerJwks };
    if (!receiver) return undefined;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  return options;
}

/** `--webhook-signer-jwks <url|file>`: its text checked now; a file path made absolute (the run's root may differ). */
function signerJwksFlag(
  values: { 'webhook-signer-jwks'?: string; 'allow-http'?: boolean },
  cwd: string,
): string | undefined {
  const location = values['webhook-signer-jwks'];
  if (location === undefined) return undefined;
  const problem = signerJwksLocationProblem(location, values['allow-http'] === true);
  if (problem) throw new UsageError(problem);
  return absoluteJwksLocation(location, cwd);
}
