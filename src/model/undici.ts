/**
 * undici, loaded on its first use rather than with the modules that use it. Importing it costs a Vitest worker about a
 * third of a second of its start, and a worker whose storyboard files the run host runs (plugin/run-host.ts) makes no
 * HTTP request of its own: its steps read their outcomes over node:http (transport/control-server.ts). undici is
 * CommonJS (`main` only), so `require` gives the very module `import` would.
 */
import { createRequire } from 'node:module';
import type { Agent, Dispatcher } from 'undici';

export type { Agent, Dispatcher };
export type Undici = typeof import('undici');

let loaded: Undici | undefined;

export function undici(): Undici {
  return (loaded ??= createRequire(import.meta.url)('undici') as Undici);
}

/** Proxies as the environment names them (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), else direct. */
export function dispatcherFor(
  env: NodeJS.ProcessEnv,
  options: { connectTimeout: number; keepAliveTimeout: number },
): Dispatcher {
  const [httpsProxy, httpProxy] = [env.HTTPS_PROXY ?? env.https_proxy, env.HTTP_PROXY ?? env.http_proxy];
  const { Agent, EnvHttpProxyAgent } = undici();
  if (!httpsProxy && !httpProxy) return new Agent(options);
  const noProxy = env.NO_PROXY ?? env.no_proxy ?? '';
  return new EnvHttpProxyAgent({ ...options, httpProxy: httpProxy ?? '', httpsProxy: httpsProxy ?? '', noProxy });
}
