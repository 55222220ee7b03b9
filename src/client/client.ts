/**
 * `createAdcpClient()`: one agent, called from a hand-written test the way a
 * storyboard step calls it — the engine's own transports (transport/mcp.ts,
 * transport/a2a.ts), the same SSRF guard, the same response record. No test
 * framework in here, so Jest tests can use it too.
 *
 * ```ts
 * const adcp = createAdcpClient({ url: 'http://127.0.0.1:3000/mcp', auth: process.env.ADCP_AUTH_TOKEN });
 * const res = await adcp.call('list_creatives', {}, { auth: 'none' });
 * expect(res).toRejectUnauthenticated();
 * await adcp.close();
 * ```
 */
import type { Exchange } from '../model/exchange.js';
import { ConfigurationError } from '../model/errors.js';
import { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS, plainHttpRemote } from '../config.js';
import { createTransport, type Protocol } from '../transport/create.js';
import type { AgentTransport } from '../transport/types.js';
import { credentialsFor, type AdcpAuth } from './auth.js';

export type { AdcpAuth } from './auth.js';

export interface AdcpClientOptions {
  /** The agent's MCP endpoint, or (A2A) where its agent card is, e.g. `https://agent.example.com/a2a`. */
  url: string;
  /** How to reach the agent. @default 'mcp' */
  protocol?: Protocol;
  /** Credentials of every call that does not name its own: a Bearer token, `{ basic: … }`, or `'none'`. @default 'none' */
  auth?: AdcpAuth;
  /** Bound on each call (connect + request + answer), in milliseconds. @default 30000 */
  timeoutMs?: number;
  /** Largest answer read, in bytes. @default 10485760 */
  maxResponseBytes?: number;
  /**
   * Local development only: allow a plain-http agent URL that is not loopback, and let the client fetch URLs the
   * agent supplies (an A2A card's endpoint) over http or on private addresses — as the plugin's `agent.allowHttp`.
   * @default false
   */
  allowHttp?: boolean;
}

export interface AdcpCallOptions {
  /** This call's credentials: omitted = the client's, `'none'`, a Bearer token, or `{ basic: … }`. */
  auth?: AdcpAuth;
  /** @default the client's timeoutMs */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * What one call produced: the record a storyboard step keeps (`request`,
 * `response` with the HTTP status and the headers the contract's allowlist
 * keeps, `extraction` path, the task `data` or the error), with the status and
 * headers also at the top for tests. It is what the `vitest-adcp/matchers`
 * matchers take.
 */
export interface AdcpResponse extends Exchange {
  /** The task called. */
  readonly task: string;
  /** The HTTP status of the answer; absent when no HTTP answer arrived (see `transportError`). */
  readonly status?: number;
  /** Response headers through the runner output contract's allowlist, names lower-cased. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface AdcpClient {
  readonly url: string;
  readonly protocol: Protocol;
  /**
   * Calls a task. Never throws for what the agent does — an HTTP error, a JSON-RPC error, a timeout comes back in
   * the response (`status`, `rpcError`, `transportError`); throws only for a call that cannot be made (bad `auth`).
   */
  call(task: string, payload?: Record<string, unknown>, options?: AdcpCallOptions): Promise<AdcpResponse>;
  /** Ends the client's sessions with the agent. Calls after it open new ones. */
  close(): Promise<void>;
}

export function createAdcpClient(options: AdcpClientOptions): AdcpClient {
  const url = checkedUrl(options);
  const protocol = options.protocol ?? 'mcp';
  if (protocol !== 'mcp' && protocol !== 'a2a')
    throw new ConfigurationError(`createAdcpClient: protocol is ${JSON.stringify(protocol)}; use 'mcp' or 'a2a'`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // Checked now, so a bad default fails where the client is made, not at the first call.
  const defaultCredentials = credentialsFor(options.auth, 'createAdcpClient');
  // One transport for the client's life: MCP keeps a session per credential, A2A the discovered card.
  let transport: AgentTransport | undefined;
  const open = () =>
    (transport ??= createTransport(protocol, {
      url,
      maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      urlGuard: { allowHttp: options.allowHttp === true },
    }));
  return {
    url,
    protocol,
    async call(task, payload = {}, callOptions = {}) {
      if (typeof task !== 'string' || task === '')
        throw new TypeError(
          `adcp.call: the task must be a task name such as 'list_creatives', received ${JSON.stringify(task)}`,
        );
      const credentials =
        callOptions.auth === undefined ? defaultCredentials : credentialsFor(callOptions.auth, `adcp.call('${task}')`);
      const exchange = await open().call(task, payload, {
        credentials,
        timeoutMs: callOptions.timeoutMs ?? timeoutMs,
        ...(callOptions.signal ? { signal: callOptions.signal } : {}),
      });
      return {
        ...exchange,
        task,
        ...(exchange.response?.status !== undefined ? { status: exchange.response.status } : {}),
        headers: { ...exchange.response?.headers },
      };
    },
    async close() {
      const closing = transport;
      transport = undefined;
      await closing?.close();
    },
  };
}

/** The agent URL, refused as the plugin refuses it (config.ts): not http(s), or plain http to a remote host without allowHttp. */
function checkedUrl(options: AdcpClientOptions): string {
  const url = options?.url;
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) {
    throw new ConfigurationError(
      `createAdcpClient: url must be the agent's http(s) URL, e.g. http://127.0.0.1:3000/mcp; received ${url === undefined ? 'nothing' : JSON.stringify(url)}`,
    );
  }
  if (!options.allowHttp && plainHttpRemote(url)) {
    throw new ConfigurationError(
      `createAdcpClient: ${url} is plain http to a host that is not loopback, so credentials would go out in cleartext. Use https://, or for a development agent pass allowHttp: true`,
    );
  }
  return url;
}
