#!/usr/bin/env node
/**
 * universal/webhook-emission.yaml, ours against the reference runner of
 * @adcp/sdk, both with a webhook receiver, against the fixture agent's webhook
 * behaviours — the one place where webhooks actually flow (the SDK's example
 * agents configure no webhook emitter). Per behaviour and step: both verdicts.
 *
 *   npm run build && node bench/webhooks.mjs
 *   VITEST_ADCP_DIST=<another build> node bench/webhooks.mjs
 *
 * Reference: `runStoryboard` with `webhook_receiver: { mode: 'loopback_mock' }`,
 * `contracts: ['webhook_receiver_runner']` and `webhook_signing` given the
 * fixture's JWKS (its CLI passes no verifier, so signature steps would only be
 * `unsatisfied_contract` there). Its request builder books `test-product` /
 * `default` on create_media_buy, so both are seeded in the run's sandbox.
 */
import { join } from 'node:path';
import { InMemoryReplayStore, InMemoryRevocationStore, StaticJwksResolver } from '@adcp/sdk/signing';
import { adcp, corpus, reference, startFixtureAgent } from './lib.mjs';

const TOKEN = 'demo-bench-webhooks';
const file = join(corpus.root, 'universal', 'webhook-emission.yaml');
const behaviours = [
  undefined,
  'webhook_unsigned',
  'webhook_no_idempotency_key',
  'webhook_rotating_key',
  'webhook_no_retry',
  'webhook_reused_nonce',
  'webhook_never',
];
const TIMEOUT_MS = 8_000;

const agent = await startFixtureAgent();
const receiver = await adcp.WebhookReceiver.start();
let sessions = 0;

async function seed(url) {
  const transport = new adcp.McpTransport({ url, maxResponseBytes: 1_000_000 });
  const options = { credentials: { kind: 'bearer', token: TOKEN }, timeoutMs: 10_000 };
  try {
    await transport.call(
      'comply_test_controller',
      { scenario: 'seed_product', params: { product_id: 'test-product', fixture: {} } },
      options,
    );
    await transport.call(
      'comply_test_controller',
      {
        scenario: 'seed_pricing_option',
        params: { product_id: 'test-product', pricing_option_id: 'default', fixture: {} },
      },
      options,
    );
  } finally {
    await transport.close();
  }
}

function endpoint(behaviour) {
  return agent.urlFor([...(behaviour ? [`${behaviour}@create_media_buy`] : []), `session_whb${++sessions}`]);
}

async function ours(behaviour) {
  const url = endpoint(behaviour);
  await seed(url);
  const loaded = adcp.loadStoryboardFile(file, { corpusRoot: corpus.root });
  const run = adcp.openStoryboardRun(
    loaded.storyboard,
    { agentUrl: url, authToken: TOKEN, corpusRoot: corpus.root, timeoutMs: TIMEOUT_MS },
    { env: {}, webhooks: receiver },
  );
  try {
    return new Map(
      (await run.runAll()).map((o) => [
        o.result.step_id,
        { verdict: o.status === 'skipped' ? `skipped:${o.result.skip.reason}` : o.status, why: why(o.result) },
      ]),
    );
  } finally {
    await run.close();
  }
}

function why(result) {
  if (result.skip) return result.skip.detail.slice(0, 90);
  const failed = result.validations.filter((v) => !v.passed);
  return result.error?.slice(0, 90) ?? failed.map((v) => v.actual?.code ?? v.check).join(', ');
}

async function theirs(behaviour) {
  const url = endpoint(behaviour);
  await seed(url);
  const jwks = await (await fetch(`${agent.origin}/.well-known/jwks.json`)).json();
  const quiet = [console.log, console.warn, console.error];
  console.log = console.warn = console.error = () => {};
  try {
    const storyboard = reference.loadStoryboardFile(file);
    const result = await reference.runStoryboard(url, storyboard, {
      allow_http: true,
      auth: { type: 'bearer', token: TOKEN },
      webhook_receiver: { mode: 'loopback_mock' },
      contracts: ['webhook_receiver_runner'],
      webhook_signing: {
        jwks: new StaticJwksResolver(jwks.keys),
        replayStore: new InMemoryReplayStore(),
        revocationStore: new InMemoryRevocationStore(),
      },
      timeout_ms: TIMEOUT_MS,
    });
    return new Map(
      result.phases.flatMap((phase) =>
        phase.steps.map((step) => [
          step.step_id,
          {
            verdict: step.skipped
              ? `skipped:${step.skip?.reason ?? step.skip_reason}`
              : step.passed
                ? 'passed'
                : 'failed',
            why: step.skipped
              ? (step.skip?.detail ?? '').slice(0, 90)
              : (step.validations ?? [])
                  .filter((v) => !v.passed)
                  .map((v) => v.actual?.code ?? v.check)
                  .join(', ') || (step.error ?? '').slice(0, 90),
          },
        ]),
      ),
    );
  } finally {
    [console.log, console.warn, console.error] = quiet;
  }
}

let agree = 0;
let total = 0;
const rows = [];
try {
  for (const behaviour of behaviours) {
    const [o, t] = [await ours(behaviour), await theirs(behaviour)];
    for (const [step, mine] of o) {
      const ref = t.get(step) ?? { verdict: '(not reported)', why: '' };
      total++;
      if (ref.verdict === mine.verdict) agree++;
      else rows.push({ behaviour: behaviour ?? '(conformant)', step, reference: ref, ours: mine });
    }
  }
} finally {
  await receiver.close();
  await agent.close();
}
console.log(
  `webhook_emission on the fixture agent: ${agree}/${total} step verdicts agree over ${behaviours.length} behaviours\n`,
);
console.log('| behaviour | step | reference | vitest-adcp |');
console.log('|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.behaviour} | ${r.step} | ${r.reference.verdict}${r.reference.why ? ` (${r.reference.why})` : ''} | ${r.ours.verdict}${r.ours.why ? ` (${r.ours.why})` : ''} |`,
  );
