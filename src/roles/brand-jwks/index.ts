/**
 * The brand-JWKS role: AdCP 3.1's runner tasks that check, before any signature is verified, that the agent publishes
 * its signing keys where a receiver looks (universal/webhook-emission.yaml, phase `signing_keys_published`):
 *
 * - `fetch_brand_jwks`: the agent's brand.json is reachable and parses, its `agents[]` entry for the agent names a
 *   `jwks_uri`, and that JWKS answers — discovery as webhooks/signer-keys.ts does it for the webhook verifier (origin
 *   `/.well-known/brand.json`, one redirect, the SSRF guard). Fails with the storyboard's codes
 *   (`brand_json_unreachable`, `brand_json_malformed`, `agents_jwks_uri_missing`, and `jwks_unreachable`).
 * - `assert_jwks_purpose`: at least one key of that JWKS carries a webhook-valid purpose — `adcp_use:
 *   "request-signing"`, or the deprecated `"webhook-signing"` — else `webhook_signing_keys_unpublished` (no JWKS, no
 *   key) or `webhook_signing_keys_wrong_purpose`. Revocation is published as a list (security.mdx > Transport
 *   revocation), which this runner does not read yet: the record says so.
 *
 * Stateless and observable-only (no traffic to the agent's tools); one discovery per run, shared by both steps.
 */
import type { AgentStep, RoleOutcome, RoleRun, RoleSession, RunnerRole } from '../../engine/role.js';
import type { StepResult, ValidationResult } from '../../model/records.js';
import { SignerKeys } from '../../webhooks/signer-keys.js';

const FETCH = 'fetch_brand_jwks';
const ASSERT = 'assert_jwks_purpose';
const WEBHOOK_PURPOSES = ['request-signing', 'webhook-signing'];

export const brandJwksRole: RunnerRole = {
  name: 'brand-jwks',
  tasks: new Set([FETCH, ASSERT]),
  open: (run) => brandJwksSession(run),
};

function brandJwksSession(run: RoleRun): RoleSession {
  let keys: SignerKeys | undefined;
  const discovered = () => {
    keys ??= new SignerKeys(run.transport().url, {
      timeoutMs: run.settings.timeoutMs,
      ...(run.settings.urlGuard ? { guard: run.settings.urlGuard } : {}),
    });
    return keys.discovered();
  };
  return {
    run: async (step: AgentStep, result: StepResult): Promise<RoleOutcome> => {
      const { source, keys: jwks } = await discovered();
      const file = run.storyboard.file;
      const at = { file, line: step.step.loc.line, column: step.step.loc.column };
      const record = (v: Omit<ValidationResult, 'source' | 'schema_id' | 'schema_url'>): StepResult => ({
        ...result,
        validations: [{ ...v, schema_id: null, schema_url: null, source: at }],
        passed: v.passed,
        ...(v.passed ? {} : { error: v.error }),
      });
      if (step.task === FETCH) {
        if (source.problem)
          return {
            result: record({
              check: FETCH,
              passed: false,
              description: "brand.json and the agent's jwks_uri resolve to a JWKS",
              json_pointer: null,
              expected: { brand_json: source.brandJsonUrl, jwks_uri: 'reachable' },
              actual: source.failure ?? 'brand_json_unreachable',
              error: `${source.failure ?? 'brand_json_unreachable'}: ${source.problem}`,
            }),
          };
        return {
          result: record({
            check: FETCH,
            passed: true,
            description: "brand.json and the agent's jwks_uri resolve to a JWKS",
            observations: [
              `brand.json ${source.brandJsonUrl}; jwks_uri ${source.jwksUri}; ${jwks?.length ?? 0} key(s)`,
            ],
          }),
        };
      }
      const description =
        'the published JWKS holds a webhook-valid signing key (adcp_use request-signing, or deprecated webhook-signing)';
      const all = jwks ?? [];
      const valid = all.filter((k) => typeof k.adcp_use === 'string' && WEBHOOK_PURPOSES.includes(k.adcp_use));
      if (valid.length > 0)
        return {
          result: record({
            check: ASSERT,
            passed: true,
            description,
            observations: [
              `${valid.length} key(s) with a webhook-valid purpose: ${valid.map((k) => k.kid ?? '(no kid)').join(', ')}`,
              'revocation (revoked_kids) was not consulted: vitest-adcp does not read the revocation list yet',
            ],
          }),
        };
      const code = all.length === 0 ? 'webhook_signing_keys_unpublished' : 'webhook_signing_keys_wrong_purpose';
      return {
        result: record({
          check: ASSERT,
          passed: false,
          description,
          json_pointer: null,
          expected: { adcp_use: WEBHOOK_PURPOSES },
          actual: all.map((k) => k.adcp_use ?? null),
          error: `${code}: ${source.problem ?? (all.length === 0 ? 'the JWKS holds no key' : `no key has a webhook-valid adcp_use (found ${[...new Set(all.map((k) => String(k.adcp_use)))].join(', ')})`)}`,
        }),
      };
    },
  };
}
