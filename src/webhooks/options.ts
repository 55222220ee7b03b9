/**
 * Whether a run hosts a webhook receiver, and how (test-kits/webhook-receiver-runner.yaml
 * > endpoint_modes):
 *
 *   loopback  a listener on 127.0.0.1, ephemeral port; the agent must be able
 *             to reach the runner's loopback (an agent on the same machine).
 *   proxy     proxy_url mode: an operator-supplied public base URL that routes
 *             to the listener (a tunnel or ingress), the listener on a fixed
 *             port. ADCP_RUNNER_WEBHOOK_BASE_URL sets the base URL (and with it
 *             this mode); it must be https unless the explicit local-dev flag
 *             `allowHttpBaseUrl` (CLI `--webhook-allow-http`) is given.
 *   off       no receiver: storyboard steps that need one grade not_applicable
 *             (or unsatisfied_contract), as the storyboards say.
 *
 * Off unless asked for: hosting a listener is a side effect of the run, and a
 * loopback URL handed to a remote agent would only produce "no webhook
 * received" failures.
 */
import { ConfigurationError } from '../model/errors.js';
import { checkBaseUrl, type WebhookReceiverOptions } from './receiver.js';

export interface WebhookOptions {
  /** @default 'proxy' when a public base URL is configured, else 'off' */
  receiver?: 'loopback' | 'proxy' | 'off';
  /** proxy mode: the public base URL (env ADCP_RUNNER_WEBHOOK_BASE_URL). */
  publicBaseUrl?: string;
  /** Interface the listener binds. @default '127.0.0.1' */
  host?: string;
  /** Listener port; required in proxy mode (env ADCP_RUNNER_WEBHOOK_PORT). @default 0 (ephemeral) in loopback mode */
  port?: number;
  /** Local development only: accept an http:// public base URL. */
  allowHttpBaseUrl?: boolean;
  /** Largest webhook body kept. @default 1048576 */
  maxBodyBytes?: number;
  /**
   * Local development only: the webhook signer's JWKS — a JSON file (relative to the project root) or a URL (https, or
   * http to a loopback host) — webhook signatures are verified against *instead of* the spec's brand.json discovery,
   * for an agent that publishes no brand.json yet. Each such verdict says its keys are the operator's, not the spec's
   * discovery (operator-jwks.ts). Only the keys' public members are kept. Env ADCP_RUNNER_WEBHOOK_SIGNER_JWKS.
   */
  signerJwks?: string;
}

const WEBHOOK_BASE_URL_ENV = 'ADCP_RUNNER_WEBHOOK_BASE_URL';
const WEBHOOK_PORT_ENV = 'ADCP_RUNNER_WEBHOOK_PORT';

/** The receiver to start, or `undefined` for none. Throws a ConfigurationError for a setting that cannot work. */
export function resolveWebhookReceiver(
  given: WebhookOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): WebhookReceiverOptions | undefined {
  const envBase = env[WEBHOOK_BASE_URL_ENV]?.trim() || undefined;
  const publicBaseUrl =
    given.publicBaseUrl ?? (given.receiver === 'loopback' || given.receiver === 'off' ? undefined : envBase);
  const mode = given.receiver ?? (publicBaseUrl ? 'proxy' : 'off');
  if (mode === 'off') return undefined;
  const limits = given.maxBodyBytes !== undefined ? { maxBodyBytes: given.maxBodyBytes } : {};
  if (mode === 'loopback') return loopbackReceiver(given, limits);
  if (mode !== 'proxy')
    throw new ConfigurationError(`webhooks.receiver is "${String(mode)}": use "loopback", "proxy" or "off"`);
  return proxyReceiver(given, env, publicBaseUrl, limits);
}

/** Loopback mode: a listener on a loopback interface, by default 127.0.0.1 on an ephemeral port. */
function loopbackReceiver(given: WebhookOptions, limits: { maxBodyBytes?: number }): WebhookReceiverOptions {
  if (given.publicBaseUrl)
    throw new ConfigurationError(
      'webhooks.publicBaseUrl is for proxy mode: drop it, or set webhooks.receiver to "proxy"',
    );
  const host = given.host ?? '127.0.0.1';
  if (host === '0.0.0.0' || host === '::')
    throw new ConfigurationError(
      `webhooks.host ${host} is not loopback: use proxy mode (a public base URL) for a receiver other machines reach`,
    );
  return { host, port: given.port ?? 0, ...limits };
}

/** Proxy mode: a listener on a fixed port, which the public base URL (https, unless allowed otherwise) routes to. */
function proxyReceiver(
  given: WebhookOptions,
  env: NodeJS.ProcessEnv,
  publicBaseUrl: string | undefined,
  limits: { maxBodyBytes?: number },
): WebhookReceiverOptions {
  if (!publicBaseUrl)
    throw new ConfigurationError(
      `webhook receiver in proxy mode needs a public base URL: set ${WEBHOOK_BASE_URL_ENV} (or webhooks.publicBaseUrl / --webhook-base-url)`,
    );
  try {
    checkBaseUrl(publicBaseUrl);
  } catch (error) {
    throw new ConfigurationError((error as Error).message);
  }
  if (new URL(publicBaseUrl).protocol === 'http:' && !given.allowHttpBaseUrl) {
    // webhook-receiver-runner.yaml > endpoint_modes > proxy_url: https REQUIRED unless an explicit local-dev flag.
    throw new ConfigurationError(
      `the webhook base URL ${publicBaseUrl} is plain http: proxy_url mode requires https (test-kits/webhook-receiver-runner.yaml); for local development only, pass --webhook-allow-http (webhooks.allowHttpBaseUrl)`,
    );
  }
  const port = proxyPort(given.port ?? env[WEBHOOK_PORT_ENV]?.trim(), publicBaseUrl);
  return { host: given.host ?? '127.0.0.1', port, publicBaseUrl: publicBaseUrl.replace(/\/+$/, ''), ...limits };
}

/** The fixed port a proxy-mode listener binds: the one the public base URL routes to. */
function proxyPort(portText: number | string | undefined, publicBaseUrl: string): number {
  const port = portText === undefined || portText === '' ? undefined : Number(portText);
  if (port === undefined || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ConfigurationError(
      `webhook receiver in proxy mode listens on a fixed port, the one ${publicBaseUrl} routes to: set webhooks.port (--webhook-port, ${WEBHOOK_PORT_ENV})${port !== undefined ? `; "${portText}" is not a port` : ''}`,
    );
  }
  return port;
}
