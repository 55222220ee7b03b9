/**
 * The example agents of @adcp/sdk the compare bench runs against, and how to
 * start each one: its file in node_modules/@adcp/sdk/examples/, the mock
 * upstream (`adcp mock-server <specialism>`) it wraps, if any, and the
 * credential its header comments document. Ports are chosen at run time.
 *
 * Two sets: AGENTS for the devDependency (6.11), AGENTS_SDK13 for @adcp/sdk 13
 * (`--sdk <dir>`), whose examples and mock servers differ; agentSet() picks by
 * the SDK's major version.
 */

/** The harness bearer token the hello_* adapters accept (their ADCP_AUTH_TOKEN default). */
const HARNESS_TOKEN = 'sk_harness_do_not_use_in_prod';

/**
 * @typedef {object} AgentSpec
 * @property {string} name            short name (CLI `--agents`, output file names)
 * @property {string} example         file under node_modules/@adcp/sdk/examples/
 * @property {string} role            what it claims, for the tables
 * @property {string} [mock]          `adcp mock-server` specialism it needs as its upstream
 * @property {string} [auth]          bearer token for both runners
 * @property {number} [fixedPort]     port the example hard-codes (rebound by the listen-local preload)
 * @property {'mcp' | 'a2a'} [protocol] 'a2a': the example's AdcpServer served over A2A (createA2AAdapter, the
 *                                    a2a-serve preload) at /a2a, and both runners run with `--protocol a2a`
 * @property {boolean} [signing]     request signing wired into the example's createAdcpServer (the signing-serve
 *                                    preload): it advertises `request_signing` and verifies RFC 9421 signatures
 * @property {(ports: { agent: number, mock?: number }) => Record<string,string>} [env]
 */

/** @type {AgentSpec[]} */
export const AGENTS = [
  {
    name: 'seller-guaranteed',
    example: 'hello_seller_adapter_guaranteed.ts',
    role: 'media-buy, sales-guaranteed (HITL)',
    mock: 'sales-guaranteed',
    auth: HARNESS_TOKEN,
    env: ({ agent, mock }) => ({ PORT: String(agent), UPSTREAM_URL: `http://127.0.0.1:${mock}` }),
  },
  {
    name: 'signals-marketplace',
    example: 'hello_signals_adapter_marketplace.ts',
    role: 'signals, signal-marketplace',
    mock: 'signal-marketplace',
    auth: HARNESS_TOKEN,
    env: ({ agent, mock }) => ({ PORT: String(agent), UPSTREAM_URL: `http://127.0.0.1:${mock}` }),
  },
  {
    name: 'creative-template',
    example: 'hello_creative_adapter_template.ts',
    role: 'creative, creative-template',
    mock: 'creative-template',
    auth: HARNESS_TOKEN,
    env: ({ agent, mock }) => ({ PORT: String(agent), UPSTREAM_URL: `http://127.0.0.1:${mock}` }),
  },
  {
    name: 'si-brand',
    example: 'hello_si_adapter_brand.ts',
    role: 'sponsored-intelligence (brand agent)',
    mock: 'sponsored-intelligence',
    auth: HARNESS_TOKEN,
    env: ({ agent, mock }) => ({ PORT: String(agent), UPSTREAM_URL: `http://127.0.0.1:${mock}` }),
  },
  {
    name: 'multi-tenant',
    example: 'hello_seller_adapter_multi_tenant.ts',
    role: 'governance-spend-authority, property-lists, brand-rights',
    auth: HARNESS_TOKEN,
    env: ({ agent }) => ({ PORT: String(agent) }),
  },
  {
    name: 'multi-tenant-a2a',
    example: 'hello_seller_adapter_multi_tenant.ts',
    role: 'the same over A2A (createA2AAdapter)',
    protocol: 'a2a',
    auth: HARNESS_TOKEN,
    env: ({ agent }) => ({ PORT: String(agent) }),
  },
  {
    name: 'multi-tenant-a2a-capabilities',
    example: 'hello_seller_adapter_multi_tenant.ts',
    role: 'the same over A2A, get_adcp_capabilities also on the card',
    protocol: 'a2a',
    auth: HARNESS_TOKEN,
    env: ({ agent }) => ({ PORT: String(agent), ADCP_BENCH_A2A_CARD_CAPABILITIES: '1' }),
  },
  {
    name: 'error-compliant',
    example: 'error-compliant-server.ts',
    role: 'media-buy (minimal, error envelopes)',
    fixedPort: 3456,
  },
  {
    name: 'comply-controller',
    example: 'comply-controller-seller.ts',
    role: 'media-buy + comply_test_controller',
    fixedPort: 3456,
  },
];

/** The same examples with request signing wired as the SDK's adopter guide says (bench/compare/signing-serve.mjs). */
for (const name of ['seller-guaranteed', 'signals-marketplace', 'multi-tenant', 'creative-template']) {
  const base = AGENTS.find((a) => a.name === name);
  if (base) AGENTS.push({ ...base, name: `${name}-signing`, role: `${base.role} + signed-requests`, signing: true });
}

/** The default set: one agent per specialism family. */
export const DEFAULT_AGENTS = AGENTS.filter((a) => !a.signing).map((a) => a.name);

/**
 * @adcp/sdk 13's worked adapters, each started as its header's "Demo:" says: `adcp mock-server <specialism>` as
 * UPSTREAM_URL, PORT, the harness token (ADCP_AUTH_TOKEN default). 13.0.0's `mock-server --help` lists only five
 * specialisms, but it boots `sales-non-guaranteed` and `creative-ad-server` too (dist/lib/mock-server/index.js).
 * @type {AgentSpec[]}
 */
export const AGENTS_SDK13 = [
  ['seller-guaranteed', 'hello_seller_adapter_guaranteed.ts', 'media-buy, sales-guaranteed (HITL)', 'sales-guaranteed'],
  [
    'seller-non-guaranteed',
    'hello_seller_adapter_non_guaranteed.ts',
    'media-buy, sales-non-guaranteed',
    'sales-non-guaranteed',
  ],
  ['creative-ad-server', 'hello_creative_adapter_ad_server.ts', 'creative, creative-ad-server', 'creative-ad-server'],
  ['creative-template', 'hello_creative_adapter_template.ts', 'creative, creative-template', 'creative-template'],
  ['signals-marketplace', 'hello_signals_adapter_marketplace.ts', 'signals, signal-marketplace', 'signal-marketplace'],
].map(([name, example, role, mock]) => ({
  name,
  example,
  role,
  mock,
  auth: HARNESS_TOKEN,
  env: ({ agent, mock: upstream }) => ({ PORT: String(agent), UPSTREAM_URL: `http://127.0.0.1:${upstream}` }),
}));
AGENTS_SDK13.push(
  {
    ...AGENTS_SDK13.find((a) => a.name === 'signals-marketplace'),
    name: 'signals-marketplace-a2a',
    role: 'the same over A2A (createA2AAdapter)',
    protocol: 'a2a',
  },
  // "npx tsx examples/error-compliant-server.ts", port 3456 hard-coded, no credential.
  {
    name: 'error-compliant',
    example: 'error-compliant-server.ts',
    role: 'media-buy (legacy handler bag)',
    fixedPort: 3456,
  },
);

/**
 * The agent set for an SDK (bench/compare/sdk.mjs): 13 and later get AGENTS_SDK13, older ones AGENTS.
 * @returns {{ agents: AgentSpec[], defaults: string[] }}
 */
export function agentSet(sdk) {
  if (sdk.major >= 13) return { agents: AGENTS_SDK13, defaults: AGENTS_SDK13.map((a) => a.name) };
  return { agents: AGENTS, defaults: DEFAULT_AGENTS };
}
