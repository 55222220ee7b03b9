/**
 * The auth and reachability preflight (src/plugin/agent-preflight.ts), against real agents on sockets: the fixture
 * agent (public discovery, protected tools: a wrong token is rejected only on a protected task), an agent that wants
 * credentials at the door (401 to everything), and a port nothing listens on. Capability selection meets the same
 * error instead of falling back to the universal storyboards.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFixtureAgent } from '../../fixtures/agent/server.mjs';
import { resolveCorpus } from '../../src/corpus.js';
import { agentPreflight, startPreflight, takePreflight } from '../../src/plugin/agent-preflight.js';
import { readAgentCapabilities, storyboardIdsForAgent } from '../../src/plugin/capabilities.js';
import { countingProxy } from '../helpers/counting-proxy.js';
import { closedPort } from '../helpers/ports.js';

const access = (url: string, authToken?: string) => ({
  url,
  timeoutMs: 5_000,
  maxResponseBytes: 1024 * 1024,
  ...(authToken !== undefined ? { authToken } : {}),
});

/** An agent behind a gateway that wants credentials on every request, MCP handshake included. */
let door: Server;
let doorUrl: string;
/** The requests the door received (HTTP method and JSON-RPC method), in order. */
const doorMethods: string[] = [];
beforeAll(async () => {
  door = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      doorMethods.push(`${req.method} ${(JSON.parse(body || '{}') as { method?: string }).method ?? ''}`.trim());
      const ok = req.headers.authorization === 'Bearer door-key';
      if (!ok) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Basic realm="door"' });
        res.end(JSON.stringify({ error: 'unauthorized' }));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => door.listen(0, '127.0.0.1', r));
  doorUrl = `http://127.0.0.1:${(door.address() as { port: number }).port}/mcp`;
});
afterAll(() => new Promise<void>((r) => door.close(() => r())));

/**
 * An MCP agent (plain JSON answers, no SSE) that refuses credentials inside a 200 answer, as a tool result carrying
 * `adcp_error.code: AUTH_REQUIRED`, instead of with an HTTP status.
 */
let inband: Server;
let inbandUrl: string;
beforeAll(async () => {
  inband = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      // The SDK client opens the server-sent events stream (GET) after the handshake: this agent has none.
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const message = JSON.parse(body) as { id?: number; method: string };
      if (message.id === undefined) return void res.writeHead(202).end();
      const result =
        message.method === 'initialize'
          ? { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'inband', version: '1' } }
          : message.method === 'tools/list'
            ? { tools: [{ name: 'get_signals', inputSchema: { type: 'object' } }] }
            : req.headers.authorization === 'Bearer inband-key'
              ? { content: [{ type: 'text', text: '{}' }], structuredContent: {} }
              : {
                  isError: true,
                  content: [{ type: 'text', text: 'denied' }],
                  structuredContent: { adcp_error: { code: 'AUTH_REQUIRED', message: 'Unknown key.' } },
                };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    });
  });
  await new Promise<void>((r) => inband.listen(0, '127.0.0.1', r));
  inbandUrl = `http://127.0.0.1:${(inband.address() as { port: number }).port}/mcp`;
});
afterAll(() => new Promise<void>((r) => inband.close(() => r())));

describe('agentPreflight', () => {
  it('stops a wrong token on the protected probe task, naming the schemes the agent asks for, and never prints the token', async () => {
    const error = await agentPreflight(access(inject('agentUrl'), 'wrong-token-7f3a')).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.name).toBe('ConfigurationError');
    expect(error?.message).toBe(
      `vitest-adcp cannot run the storyboards: the agent at ${inject('agentUrl')} rejected the configured token (list_creatives answered HTTP 401, AUTH_REQUIRED; it asks for Bearer (OAuth: a token from the authorization server its resource metadata names) or Basic). Pass \`--auth\` / \`--auth-file\` or set \`ADCP_AUTH_TOKEN\` (in a config: adcpStoryboards({ agent: { auth: { token } } })) with a credential this agent accepts. See docs/troubleshooting.md#the-agent-rejects-the-credential-or-cannot-be-reached`,
    );
    expect(error?.message).not.toContain('wrong-token-7f3a');
  });

  it('lets a token the agent accepts through, and a run without one when discovery is public (the storyboards then judge anonymous access)', async () => {
    await expect(agentPreflight(access(inject('agentUrl'), 'demo-preflight'))).resolves.toBeUndefined();
    await expect(agentPreflight(access(inject('agentUrl')))).resolves.toBeUndefined();
    await expect(
      agentPreflight({ ...access(inject('agentUrl').replace(/\/mcp$/, '/a2a'), 'demo-preflight'), protocol: 'a2a' }),
    ).resolves.toBeUndefined();
  });

  it('judges the token over A2A too', async () => {
    await expect(
      agentPreflight({ ...access(inject('agentUrl').replace(/\/mcp$/, '/a2a'), 'wrong'), protocol: 'a2a' }),
    ).rejects.toThrow(/rejected the configured token \(list_creatives answered HTTP 401/);
  });

  it('stops a run without a token when the agent wants credentials even for discovery, naming its scheme', async () => {
    // The 401 is the answer to `initialize` (the door answers nothing else); it is reported as the probe call's, which
    // met it, as capability selection reports the same door (below).
    await expect(agentPreflight(access(doorUrl))).rejects.toThrow(
      `the agent at ${doorUrl} requires authentication and no token is configured (get_adcp_capabilities answered HTTP 401; it asks for Basic). Pass \`--auth\``,
    );
    await expect(agentPreflight(access(doorUrl, 'not-the-key'))).rejects.toThrow(
      /rejected the configured token \(get_adcp_capabilities answered HTTP 401; it asks for Basic\)/,
    );
    // What reached the door: the SDK client's `initialize` for listTools, and once more for the probe call, which
    // brings back the status and WWW-Authenticate (listTools reports its failure in words only). Nothing else.
    expect(doorMethods.splice(0)).toEqual(['POST initialize', 'POST initialize', 'POST initialize', 'POST initialize']);
  });

  it('reads a refusal inside a 200 JSON answer (AUTH_REQUIRED tool result) on the protected read the agent serves', async () => {
    await expect(agentPreflight(access(inbandUrl, 'wrong'))).rejects.toThrow(
      `the agent at ${inbandUrl} rejected the configured token (get_signals answered AUTH_REQUIRED; it names no scheme: no WWW-Authenticate)`,
    );
    await expect(agentPreflight(access(inbandUrl, 'inband-key'))).resolves.toBeUndefined();
  });

  it('stops on an agent that cannot be reached, naming the URL and the error', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const error = await agentPreflight(access(url, 'demo-x')).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.name).toBe('ConfigurationError');
    expect(error?.message).toMatch(
      new RegExp(
        `^vitest-adcp cannot run the storyboards: the agent at ${url.replace(/[.]/g, '\\.')} cannot be reached \\(connect ECONNREFUSED [\\d.:]+\\)\\. Check that it is running`,
      ),
    );
    // Over A2A (the agent card's fetch) too.
    await expect(agentPreflight({ ...access(url.replace(/\/mcp$/, '/a2a')), protocol: 'a2a' })).rejects.toThrow(
      /cannot be reached \(.*ECONNREFUSED/,
    );
  });

  it('leaves what a tool answers to the steps: an error answer, a misbehaving or missing probe task is no stop', async () => {
    const agent = await startFixtureAgent();
    try {
      for (const behaviours of [
        ['error_response'],
        ['garbage'],
        ['without@list_creatives'],
        ['missing_auth_check'],
        ['json_response'],
      ]) {
        await expect(
          agentPreflight(access(agent.urlFor(behaviours as never), 'demo-preflight')),
          behaviours.join('+'),
        ).resolves.toBeUndefined();
      }
      // A probe call that gets no answer at all once the door has opened (initialize, tools/list) is a slow or stuck
      // tool, not an agent that cannot be reached: not stopped, with a token or without.
      for (const token of ['demo-preflight', undefined]) {
        await expect(
          agentPreflight({ ...access(agent.urlFor(['hang']), token), timeoutMs: 300 }),
          `hang, ${token}`,
        ).resolves.toBeUndefined();
      }
      await expect(
        agentPreflight(access(agent.urlFor(['json_response']), 'wrong')),
        'a JSON (not SSE) answer',
      ).rejects.toThrow(/rejected the configured token \(list_creatives answered HTTP 401, AUTH_REQUIRED/);
      // One call with the configured token, on the protected read; none without a token but discovery.
      agent.resetCalls();
      const proxy = await countingProxy(agent.url);
      try {
        await agentPreflight(access(proxy.url, 'demo-count'));
        await agentPreflight(access(proxy.url));
      } finally {
        await proxy.close();
      }
      expect(agent.calls.map((c) => `${c.tool}:${c.auth}`)).toEqual([
        'list_creatives:api_key',
        'get_adcp_capabilities:none',
      ]);
      // What the SDK client sends for each (the transport the steps use): one session — initialize and the initialized
      // notification —, tools/list (the probe is chosen from it; without a token it only shows the door is open) and
      // that one tool call. (Its server-sent events GET is not JSON-RPC, and is not counted.)
      for (const method of ['initialize', 'notifications/initialized', 'tools/list', 'tools/call']) {
        expect(Object.fromEntries(proxy.counts(method)), method).toEqual({ 'Bearer demo-count': 1, none: 1 });
      }
    } finally {
      await agent.close();
    }
  });
});

describe('capability selection meets the same error', () => {
  const corpusRoot = resolveCorpus(undefined, process.cwd()).root;

  it('a 401 to get_adcp_capabilities is the preflight ConfigurationError, never a fallback to the universal storyboards', async () => {
    const warnings: string[] = [];
    const error = await storyboardIdsForAgent(access(doorUrl), corpusRoot, { warn: (m) => warnings.push(m) }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.name).toBe('ConfigurationError');
    expect(error?.message).toContain(
      `the agent at ${doorUrl} requires authentication and no token is configured (get_adcp_capabilities answered HTTP 401; it asks for Basic)`,
    );
    expect(warnings).toEqual([]);
    await expect(readAgentCapabilities(access(doorUrl, 'wrong'))).rejects.toThrow(/rejected the configured token/);
  });
});

describe('a preflight started ahead of its run (the bin: startPreflight, takePreflight)', () => {
  it('is taken once, by a run of the same agent, credential and bounds; its verdict is the preflight’s', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    startPreflight(access(url, 'demo-ahead'));
    // Another credential, another timeout, another URL: not the preflight that run would make.
    expect(takePreflight(access(url, 'demo-other'))).toBeUndefined();
    expect(takePreflight({ ...access(url, 'demo-ahead'), timeoutMs: 1_000 })).toBeUndefined();
    expect(takePreflight(access(`${url}2`, 'demo-ahead'))).toBeUndefined();
    const taken = takePreflight(access(url, 'demo-ahead'));
    await expect(taken).rejects.toThrow(`the agent at ${url} cannot be reached`);
    expect(takePreflight(access(url, 'demo-ahead'))).toBeUndefined();
  });

  it('passes on an agent that accepts the credential, and one nobody takes rejects no further', async () => {
    startPreflight(access(inject('agentUrl'), 'demo-ahead'));
    await expect(takePreflight(access(inject('agentUrl'), 'demo-ahead'))).resolves.toBeUndefined();
    // Left: a rejection nobody awaits must not count as unhandled (Vitest fails the run on one).
    startPreflight(access(`http://127.0.0.1:${await closedPort()}/mcp`));
    await new Promise((resolve) => setTimeout(resolve, 200));
  });
});
