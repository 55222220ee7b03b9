/**
 * The example agents of @adcp/sdk the compare bench runs against, and how to
 * start each one: its file in node_modules/@adcp/sdk/examples/, the mock
 * upstream (`adcp mock-server <specialism>`) it wraps, if any, and the
 * credential its header comments document. Ports are chosen at run time.
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
