/**
 * Preload (`--import`, after listen-local.mjs) for the compare bench's A2A
 * agents: an example of @adcp/sdk that ends with `serve(createAgent, options)`
 * serves the same `AdcpServer` over A2A instead of MCP, the way the SDK's
 * docs/guides/BUILD-AN-AGENT.md > "Exposing your agent over A2A" wires it:
 * `createA2AAdapter({ server, agentCard, authenticate })` mounted on express —
 * JSON-RPC at /a2a, the agent card at /a2a/.well-known/agent-card.json and at
 * the origin root. `options.authenticate` (the example's own authenticator)
 * runs before the JSON-RPC handler and rejects with 401 + WWW-Authenticate
 * (the SDK's `respondUnauthorized`), as `serve()` does over MCP; the card stays
 * public. Nothing of the example changes but the transport.
 *
 * ADCP_BENCH_A2A_CARD_CAPABILITIES=1 lists `get_adcp_capabilities` among the
 * card's skills too (createA2AAdapter leaves it out; the AdCP A2A profile says
 * it "MUST appear on every interface"), so both runners can choose storyboards
 * from the agent's capabilities, as they do over MCP.
 *
 * How: `serve` is replaced on the SDK's own serve module (CommonJS) before the
 * example loads; the SDK re-exports it by reference, so the example picks this
 * one up. The SDK is ADCP_BENCH_SDK_ROOT's (the compare bench sets it to the
 * SDK under test), else this checkout's; express and the MCP SDK are resolved
 * from beside it. In 6.x the module's `serve` is a plain property and is
 * assigned; 13.x is bundled by esbuild, whose CommonJS exports are getters
 * that cannot be assigned, so the module's cached exports are swapped for a
 * copy with this `serve` (what `require('./serve')` in the SDK's server index
 * then gets; the example runs as CommonJS under tsx, the package being
 * `"type": "commonjs"`).
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdkRoot =
  process.env.ADCP_BENCH_SDK_ROOT || fileURLToPath(new URL('../../node_modules/@adcp/sdk/', import.meta.url));
const require = createRequire(join(sdkRoot, 'package.json'));
const servePath = require.resolve(join(sdkRoot, 'dist', 'lib', 'server', 'serve.js'));
const serveModule = require(servePath);

/** The principal an authenticator returned, as the AdCP handlers expect it on `authInfo`. */
function authInfoOf(principal) {
  return {
    token: principal.token ?? '',
    clientId: principal.principal,
    scopes: principal.scopes ?? [],
    ...(principal.credential !== undefined || principal.extra !== undefined
      ? {
          extra: {
            ...(principal.extra ?? {}),
            ...(principal.credential !== undefined ? { credential: principal.credential } : {}),
          },
        }
      : {}),
  };
}

function serveOverA2a(createAgent, options = {}) {
  void listenOverA2a(createAgent, options).catch((error) => {
    console.error('a2a-serve:', error);
    process.exit(1);
  });
}

if (Object.getOwnPropertyDescriptor(serveModule, 'serve')?.writable) serveModule.serve = serveOverA2a;
else {
  // Every other export read through from the module, as the SDK's own re-exports do.
  const copy = {};
  for (const key of Object.keys(serveModule))
    Object.defineProperty(copy, key, { get: () => serveModule[key], enumerable: true, configurable: true });
  Object.defineProperty(copy, '__esModule', { value: true });
  Object.defineProperty(copy, 'serve', { value: serveOverA2a, enumerable: true });
  require.cache[servePath].exports = copy;
}

// Only now: the SDK's server index takes `serve` from the module when it loads.
const { createA2AAdapter, respondUnauthorized } = require('@adcp/sdk/server');
const { InMemoryTaskStore } = require('@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js');
const express = require('express');

async function listenOverA2a(createAgent, options) {
  const port = options.port ?? (process.env.PORT ? Number(process.env.PORT) : 3001);
  const url = `http://127.0.0.1:${port}/a2a`;
  // One AdcpServer for the process (the card lists its tools); its stores are the example's own.
  const server = createAgent({ taskStore: options.taskStore ?? new InMemoryTaskStore(), host: `127.0.0.1:${port}` });
  const adapterOptions = {
    server,
    agentCard: {
      name: 'compare-bench A2A agent',
      description: `${process.argv[1] ?? 'example'} over A2A (createA2AAdapter)`,
      url,
      version: '1.0.0',
    },
    ...(options.authenticate ? { authenticate: async (req) => req.benchAuthInfo ?? null } : {}),
  };
  let a2a = createA2AAdapter(adapterOptions);
  if (process.env.ADCP_BENCH_A2A_CARD_CAPABILITIES === '1') {
    const { skills } = await a2a.getAgentCard();
    const capabilities = {
      id: 'get_adcp_capabilities',
      name: 'get_adcp_capabilities',
      description: 'AdCP tool: get_adcp_capabilities.',
      tags: ['adcp'],
    };
    a2a = createA2AAdapter({
      ...adapterOptions,
      agentCard: { ...adapterOptions.agentCard, skills: [capabilities, ...skills] },
    });
  }
  const app = express();
  app.use(express.json({ limit: '2mb' }));
  if (options.authenticate) {
    app.post('/a2a', async (req, res, next) => {
      let principal;
      try {
        principal = await options.authenticate(req);
      } catch (error) {
        return respondUnauthorized(req, res, {
          error: 'invalid_token',
          errorDescription: error?.publicMessage ?? 'Credentials rejected.',
        });
      }
      if (!principal)
        return respondUnauthorized(req, res, {
          error: 'invalid_token',
          errorDescription: 'Missing or unrecognized credentials.',
        });
      req.benchAuthInfo = authInfoOf(principal);
      next();
    });
  }
  a2a.mount(app);
  app.listen(port, () => {
    console.log(`A2A agent on ${url} (card: ${url}/.well-known/agent-card.json)`);
    options.onListening?.(url);
  });
}
