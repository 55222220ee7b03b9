#!/usr/bin/env node
/**
 * The `signed_requests` vector steps, vitest-adcp against the reference
 * grader of @adcp/sdk, on verifiers that advertise `request_signing` — the
 * SDK's example agents do not, so bench:compare only shows the gating there.
 *
 * For each `request_signing*` behaviour of our fixture agent (whose verifier
 * is @adcp/sdk/signing/server's): `adcp grade request-signing <url>
 * --transport mcp --allow-http --json` (the reference's grader with the MCP
 * transport its storyboard runner cannot select from the CLI) and
 * `vitest-adcp <url> --storyboards signed_requests --report`, each on its own
 * session endpoint (the agent's replay cache is per target URI); then vector
 * by vector: passed | failed | skipped:<reason> (the reference's detailed skip
 * reasons mapped to the output contract's canonical ones, as its storyboard
 * runner maps them).
 *
 *   npm run build && node bench/compare-signing.mjs [--behaviours request_signing,request_signing_wrong_code]
 *
 * Writes bench/out/compare-signing.json and prints a table per behaviour.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REQUEST_SIGNING_BEHAVIOURS } from '../fixtures/agent/request-signing.mjs';
import { startFixtureAgent } from '../fixtures/agent/server.mjs';
import { runToEnd } from './compare/processes.mjs';

const root = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const outDir = join(root, 'bench', 'out', 'signing');
const { values } = parseArgs({ options: { behaviours: { type: 'string' } } });
const BEHAVIOURS = values.behaviours
  ?.split(',')
  .map((s) => s.trim())
  .filter(Boolean) ?? [...REQUEST_SIGNING_BEHAVIOURS];
/** runner-output-contract.yaml > skip_result: the reference's narrower reasons as its runner maps them (DETAILED_SKIP_TO_CANONICAL, default not_applicable). */
const CANONICAL = {
  rate_abuse_opt_out: 'unsatisfied_contract',
  missing_test_kit_contract: 'unsatisfied_contract',
  live_side_effect_opt_in_required: 'unsatisfied_contract',
  operator_skip: 'unsatisfied_contract',
  capability_unsupported: 'unsatisfied_contract',
};
const TOKEN = 'demo-bench-signing';

mkdirSync(outDir, { recursive: true });
const agent = await startFixtureAgent();
const env = { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', ADCP_AUTH_TOKEN: TOKEN };
for (const key of Object.keys(env)) if (key.startsWith('VITEST')) delete env[key];
delete env.NODE_ENV;

const results = [];
try {
  for (const behaviour of BEHAVIOURS) {
    // 1. The reference grader.
    const refUrl = agent.urlFor([behaviour, 'session_reference']);
    const refOut = join(outDir, `${behaviour}-reference.json`);
    const ref = await runToEnd(
      'adcp grade',
      process.execPath,
      [
        join(root, 'node_modules', '@adcp', 'sdk', 'bin', 'adcp.js'),
        'grade',
        'request-signing',
        refUrl,
        '--transport',
        'mcp',
        '--allow-http',
        '--json',
      ],
      {
        cwd: root,
        env,
        logFile: join(outDir, `${behaviour}-reference.log`),
        stdoutFile: refOut,
        timeoutMs: 600_000,
      },
    );
    const report = JSON.parse(readFileSync(refOut, 'utf8'));
    const reference = new Map();
    for (const v of [...report.positive, ...report.negative]) {
      reference.set(`${v.kind}-${v.vector_id}`, {
        verdict: v.skipped ? `skipped:${CANONICAL[v.skip_reason] ?? 'not_applicable'}` : v.passed ? 'passed' : 'failed',
        detail: v.skip_reason ?? v.diagnostic,
      });
    }
    // 2. vitest-adcp (the built CLI).
    const ourUrl = agent.urlFor([behaviour, 'session_ours']);
    const ourOut = join(outDir, `${behaviour}-ours.json`);
    const ours = await runToEnd(
      'vitest-adcp',
      process.execPath,
      [join(root, 'dist', 'cli.js'), ourUrl, '--storyboards', 'signed_requests', '--report', ourOut],
      {
        cwd: root,
        env,
        logFile: join(outDir, `${behaviour}-ours.log`),
        timeoutMs: 600_000,
      },
    );
    const contract = JSON.parse(readFileSync(ourOut, 'utf8'));
    const mine = new Map();
    for (const sb of contract.storyboards) {
      if (sb.storyboard_id !== 'signed_requests') continue;
      for (const step of sb.steps) {
        if (!/^(positive|negative)-/.test(step.step_id)) continue;
        mine.set(step.step_id, {
          verdict: step.skip ? `skipped:${step.skip.reason}` : step.passed ? 'passed' : 'failed',
          detail: step.skip?.detail ?? step.error ?? step.validations?.find((v) => !v.passed)?.error,
        });
      }
    }
    // 3. Vector by vector.
    const rows = [...new Set([...reference.keys(), ...mine.keys()])].sort().map((id) => ({
      step_id: id,
      reference: reference.get(id)?.verdict ?? null,
      ours: mine.get(id)?.verdict ?? null,
      agree: reference.get(id)?.verdict === mine.get(id)?.verdict,
      reference_detail: reference.get(id)?.detail?.slice(0, 300),
      ours_detail: mine.get(id)?.detail?.slice(0, 300),
    }));
    const agree = rows.filter((r) => r.agree).length;
    results.push({
      behaviour,
      reference: { exit_code: ref.code, ms: ref.ms },
      ours: { exit_code: ours.code, ms: ours.ms },
      agree,
      compared: rows.length,
      rows,
    });
    console.log(
      `\n── ${behaviour}: ${agree}/${rows.length} vectors agree (reference ${(ref.ms / 1000).toFixed(1)} s, ours ${(ours.ms / 1000).toFixed(1)} s)`,
    );
    for (const r of rows.filter((r) => !r.agree))
      console.log(`  ${r.step_id.padEnd(55)} ${String(r.reference).padEnd(26)} → ${r.ours}`);
  }
} finally {
  await agent.close();
}
writeFileSync(join(root, 'bench', 'out', 'compare-signing.json'), JSON.stringify(results, null, 2) + '\n');
console.log('\n| fixture behaviour | vectors agree | reference → vitest-adcp |');
console.log('|---|--:|---|');
for (const r of results) {
  const tally = {};
  for (const row of r.rows.filter((x) => !x.agree))
    tally[`${row.reference} → ${row.ours}`] = (tally[`${row.reference} → ${row.ours}`] ?? 0) + 1;
  console.log(
    `| \`${r.behaviour}\` | ${r.agree}/${r.compared} | ${
      Object.entries(tally)
        .map(([k, n]) => `\`${k}\` ×${n}`)
        .join(', ') || '–'
    } |`,
  );
}
