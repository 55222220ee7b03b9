/**
 * Preload (`--import`, after listen-local.mjs) for the compare bench's
 * `*-signing` agents: an example of @adcp/sdk whose AdcpServer comes from
 * `createAdcpServer` (directly or through `createAdcpServerFromPlatform`) is
 * built with request signing wired the way the SDK's own adopter guide says
 * (skills/build-seller-agent/specialisms/signed-requests.md > "Auto-wiring via
 * createAdcpServer"): `capabilities.request_signing` advertised, the
 * `signed-requests` specialism claimed (but not advertised, see below), and `signedRequests: { jwks,
 * replayStore, revocationStore, required_for, covers_content_digest }`, which
 * makes the SDK's `serve()` mount its verifier (@adcp/sdk/signing/server) in
 * front of the MCP transport. The verifier state is the one
 * test-kits/signed-requests-runner.yaml asks an agent to pre-configure — the
 * runner keys of test-vectors/request-signing/keys.json, `test-revoked-2026`
 * revoked, the per-keyid replay cap at the kit's target — built by the same
 * class our fixture agent uses (fixtures/agent/request-signing.mjs).
 * Nothing else of the example changes.
 *
 *   ADCP_BENCH_SIGNING_DIGEST   covers_content_digest: either (default) | required | forbidden
 *
 * How: `createAdcpServer` is replaced on the SDK's own module before the
 * example loads; the SDK's index and createAdcpServerFromPlatform read it from
 * that module object at call time, so both paths pick this one up.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { RequestSignatures } from '../../fixtures/agent/request-signing.mjs';

const require = createRequire(import.meta.url);
const sdkRoot = fileURLToPath(new URL('../../node_modules/@adcp/sdk/', import.meta.url));
const serverModule = require(`${sdkRoot}dist/lib/server/create-adcp-server.js`);
const createAdcpServer = serverModule.createAdcpServer;

/** The policy advertised and enforced: the guide's example operations, the digest policy from the environment. */
const capability = {
  supported: true,
  required_for: ['create_media_buy', 'update_media_buy', 'acquire_rights'],
  supported_for: ['sync_creatives', 'sync_audiences', 'sync_accounts'],
  covers_content_digest: process.env.ADCP_BENCH_SIGNING_DIGEST ?? 'either',
};
const state = new RequestSignatures();

serverModule.createAdcpServer = function createSigningAdcpServer(config = {}) {
  const capabilities = config.capabilities ?? {};
  return createAdcpServer({
    ...config,
    capabilities: {
      ...capabilities,
      request_signing: capability,
      // The claim createAdcpServer insists on beside `signedRequests` — kept off the wire: the SDK's own runner
      // refuses an agent that lists `signed-requests` (no such specialism bundle in the 3.0.x corpus, where
      // signed_requests is a universal storyboard gated on `request_signing.supported`).
      specialisms: [...new Set([...(capabilities.specialisms ?? []), 'signed-requests'])],
      overrides: {
        ...capabilities.overrides,
        specialisms: capabilities.specialisms?.length ? capabilities.specialisms : null,
      },
    },
    signedRequests: {
      jwks: state.jwks,
      replayStore: state.replay,
      revocationStore: state.revocation,
      required_for: capability.required_for,
      covers_content_digest: capability.covers_content_digest,
    },
  });
};
