/**
 * Hostile agents and hostile storyboards (issue 13), on one real `vitest run` read many times: the fixture agent's
 * `hostile` endpoint answers each step's call with the case its `context.hostile` names (fixtures/agent/hostile.mjs),
 * over the storyboards of fixtures/hostile/ — one per threat, the hostile steps between conformant ones. For every
 * case: the run finishes within its bound, exactly the faulty steps fail with a clear one-line reason, the other steps
 * keep their verdict, the report is complete and valid against the contract schema, the terminal shows no raw control
 * character from the agent, and no planted secret appears in any output.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { builtModule } from '../helpers/built.js';
import { assertValidContractReport } from '../helpers/contract-schema.js';
import { repoRoot, runVitest, type CapturedTest, type VitestRun } from '../helpers/run-vitest.js';
import { HOSTILE_MAX_RESPONSE_BYTES, HOSTILE_TIMEOUT_MS } from './hostile-bounds.js';

const hostileDir = join(repoRoot, 'fixtures', 'hostile');
const scratch = join(repoRoot, '.vitest-adcp', `hostile-${process.pid}`);
const files = {
  report: join(scratch, 'report.json'),
  junit: join(scratch, 'junit.xml'),
  markdown: join(scratch, 'summary.md'),
  html: join(scratch, 'report.html'),
};

/** The operator's token: `"` and `\` in it, so it travels escaped once in JSON and twice inside `content[].text`. */
const TOKEN = 'demo-hostile"tok\\en-5e1f';
/** fixtures/hostile/kits/principals.yaml > auth.principals.alice.api_key. */
const PRINCIPAL_KEY = 'demo-alice-planted-c0ffee';
/** A credential in the agent URL's query. */
const URL_SECRET = 'demo-url-planted-77aa';
/** The test kit outside the project that outside-kit.storyboard.yaml names (it must never be read). */
const OUTSIDE_KIT = '/tmp/vitest-adcp-hostile/outside-kit.yaml';
const OUTSIDE_VALUES = ['demo-outside-planted-key-1234', 'outside-planted-note-5678'];

/** Per storyboard: the steps that must fail and the one-line reason each must give; every other step must pass. */
const CASES: { file: string; id: string; faulty: Record<string, RegExp> }[] = [
  {
    file: 'hang',
    id: 'hostile_hang',
    faulty: { hostile_hang: new RegExp(`no answer within ${HOSTILE_TIMEOUT_MS} ms`) },
  },
  { file: 'slow', id: 'hostile_slow', faulty: {} },
  {
    file: 'trickle',
    id: 'hostile_trickle',
    faulty: { hostile_trickle: new RegExp(`no answer within ${HOSTILE_TIMEOUT_MS} ms`) },
  },
  {
    file: 'flood',
    id: 'hostile_flood',
    faulty: {
      hostile_flood: /the agent's response exceeded 2097152 bytes; the runner stopped reading it/,
      hostile_oversize_declared: /the agent's response exceeded 2097152 bytes/,
      hostile_gzip_bomb: /the agent's response exceeded 2097152 bytes/,
    },
  },
  {
    file: 'resets',
    id: 'hostile_resets',
    faulty: {
      hostile_reset_before: /other side closed|socket hang up|ECONNRESET/,
      hostile_reset_mid: /other side closed|terminated/,
    },
  },
  {
    file: 'deep',
    id: 'hostile_deep',
    faulty: {
      hostile_deep_2000: /^field_present at \/adcp: not present/,
      hostile_deep_3500: /^field_present at \/adcp: not present/,
    },
  },
  {
    file: 'escapes',
    id: 'hostile_escapes',
    faulty: {
      hostile_escape_adcp_error:
        /^error_code at \/adcp_error\/code: expected \["INVALID_REQUEST"\], got a different string/,
      hostile_escape_text: /^field_present at \/adcp: not present/,
      hostile_escape_http500: /HTTP 500 from the agent: .*Internal error \\u\{1b\}\[2J/,
      hostile_escape_field: /^field_value at \/note: expected "a plain note", got a different string/,
    },
  },
  {
    file: 'secrets',
    id: 'hostile_secrets',
    faulty: {
      hostile_echo_token: /^field_present at \/adcp: not present/,
      hostile_echo_principal: /^field_present at \/adcp: not present/,
      hostile_echo_token_500:
        /HTTP 500 from the agent: .*credential Bearer \[redacted\] not accepted at \/x\/hostile\/mcp\?api_key=\[redac/,
    },
  },
  {
    file: 'malformed',
    id: 'hostile_malformed',
    faulty: {
      hostile_result_null:
        /the agent's answer does not have the shape the protocol requires \(result: expected object, received null\)/,
      hostile_structured_array:
        /the agent's answer does not have the shape the protocol requires \(structuredContent: expected record, received array\)/,
    },
  },
  { file: 'proto-keys', id: 'hostile_proto_keys', faulty: {} },
  {
    file: 'http-errors',
    id: 'hostile_http_errors',
    faulty: {
      hostile_huge_500: /HTTP 500 from the agent: .*<html><body>AAAA/,
      hostile_redirect_offsite: /the agent redirected .* to http:\/\/169\.254\.169\.254, another origin/,
    },
  },
  {
    file: 'outside-kit',
    id: 'hostile_outside_kit',
    faulty: {
      send_kit_values: /cannot load test kit .* is outside the project/,
      send_kit_key: /cannot load test kit .* is outside the project/,
    },
  },
];
/** Hostile storyboards that must not load: one failing test each, named after the rule, listed in the report. */
const LOAD_ERRORS = [
  { file: 'alias-bomb', rule: 'yaml_syntax', says: /Excessive alias count/ },
  { file: 'broken-yaml', rule: 'yaml_syntax', says: /Missing closing "quote/ },
  {
    file: 'proto-inject',
    rule: 'context_input_path',
    says: /"constructor\.prototype\.polluted" .* reaches "constructor"/,
  },
];

/** Every character a terminal acts on that is not a newline or a tab: C0, DEL, C1, bidi overrides and isolates. */

const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

let agent: FixtureAgent;
let run: VitestRun;
let wallMs: number;
let report: any;
let outputs: Record<string, string>;

beforeAll(async () => {
  agent = await startFixtureAgent({ hugeBytes: 2 * HOSTILE_MAX_RESPONSE_BYTES });
  mkdirSync(scratch, { recursive: true });
  mkdirSync(join(OUTSIDE_KIT, '..'), { recursive: true });
  writeFileSync(OUTSIDE_KIT, `auth:\n  api_key: "${OUTSIDE_VALUES[0]}"\nbrand:\n  note: "${OUTSIDE_VALUES[1]}"\n`);
  const started = performance.now();
  run = await runVitest({
    config: join(repoRoot, 'test', 'e2e', 'hostile.config.ts'),
    env: {
      ADCP_AGENT_URL: `${agent.origin}/x/hostile/mcp?api_key=${URL_SECRET}`,
      ADCP_AUTH_TOKEN: TOKEN,
      HOSTILE_STORYBOARDS: join(hostileDir, '*.storyboard.yaml'),
    },
    reporters: ['junit', await builtModule('vitest/reporter')],
    // The waits (hang, trickle, slow) are in three files: three workers overlap them.
    args: [
      '--maxWorkers=3',
      `--outputFile.junit=${files.junit}`,
      `--outputFile.vitest-adcp=${files.report}`,
      `--outputFile.vitest-adcp-markdown=${files.markdown}`,
      `--outputFile.vitest-adcp-html=${files.html}`,
    ],
    timeoutMs: 90_000,
  });
  wallMs = performance.now() - started;
  outputs = { stdout: run.stdout, stderr: run.stderr };
  for (const [name, file] of Object.entries(files)) {
    try {
      outputs[name] = readFileSync(file, 'utf8');
    } catch {
      outputs[name] = '';
    }
  }
  report = JSON.parse(outputs.report || 'null');
}, 120_000);

afterAll(async () => {
  await agent?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const testsOf = (file: string): CapturedTest[] =>
  run.tests.filter((t) => t.module === join(hostileDir, `${file}.storyboard.yaml`));
const stepId = (t: CapturedTest) => /\(([^()]+)\)$/.exec(t.name)![1]!;
const reportSteps = (id: string): any[] => report.storyboards.find((s: any) => s.storyboard_id === id)?.steps ?? [];
const unescapeXml = (text: string) =>
  text.replace(
    /&(lt|gt|quot|apos|amp|#\d+);/g,
    (_, e: string) =>
      ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e] ?? String.fromCodePoint(Number(e.slice(1))),
  );
/** JUnit: `classname > name` (the test's module-relative full name) → whether it has a <failure>. */
function junitVerdicts(): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const block of outputs.junit!.split('<testcase ').slice(1)) {
    const classname = unescapeXml(/classname="([^"]*)"/.exec(block)?.[1] ?? '');
    const name = unescapeXml(/ name="([^"]*)"/.exec(block)?.[1] ?? '');
    out.set(`${classname} > ${name}`, /<failure[\s>]/.test(block.split('</testcase>')[0]!));
  }
  return out;
}

describe('the run', () => {
  it('finishes within its bound: every step bounded by the step timeout, the whole run by the longest storyboard', () => {
    // Three storyboards wait a step timeout each (hang, trickle, slow), in parallel; the rest answer at once.
    expect(wallMs).toBeLessThan(75_000);
    for (const storyboard of report.storyboards) {
      for (const step of storyboard.steps)
        expect(step.duration_ms, `${storyboard.storyboard_id}/${step.step_id}`).toBeLessThan(
          HOSTILE_TIMEOUT_MS + 3_000,
        );
    }
    expect(run.exitCode).toBe(1);
    expect(run.moduleErrors).toEqual([]);
    // Every output the checks below read was written.
    for (const [name, text] of Object.entries(outputs)) expect(text.length, name).toBeGreaterThan(1_000);
    expect(`${run.stdout}\n${run.stderr}`).not.toMatch(
      /Unhandled (error|rejection)|RangeError|Maximum call stack|Invalid string length|heap out of memory|Test timed out|Hook timed out/i,
    );
  });

  it('has the hostile endpoint really misbehave (the cases below test something)', () => {
    const asked = new Set(agent.calls.map((c) => (c.arguments as any)?.context?.hostile).filter(Boolean));
    for (const name of [
      'hang',
      'slow_5500',
      'trickle',
      'flood',
      'oversize_declared',
      'gzip_bomb',
      'reset_before',
      'reset_mid',
      'deep_2000',
      'deep_3500',
      'escape_adcp_error',
      'escape_text',
      'escape_http500',
      'escape_field',
      'echo_auth',
      'echo_auth_500',
      'result_null',
      'structured_array',
      'proto_keys',
      'huge_500',
      'redirect_offsite',
    ]) {
      expect(asked, name).toContain(name);
    }
  });
});

describe.each(CASES)('storyboard $id', ({ file, id, faulty }) => {
  it('fails exactly the faulty steps, each with a clear one-line reason; the other steps keep their verdict', () => {
    const tests = testsOf(file);
    expect(tests.length).toBeGreaterThanOrEqual(Object.keys(faulty).length);
    for (const test of tests) {
      const step = stepId(test);
      const reason = faulty[step];
      if (!reason) {
        expect(test.state, `${step}: ${test.errors[0]?.message}`).toBe('passed');
        continue;
      }
      expect(test.state, step).toBe('failed');
      const message = test.errors[0]!.message;
      expect(message, step).toMatch(reason);
      expect(message, step).not.toContain('\n');
      expect(message.length, step).toBeLessThan(400);
    }
  });

  it('writes every step in the report with the verdict the terminal and JUnit show', () => {
    const tests = testsOf(file);
    const steps = reportSteps(id);
    const junit = junitVerdicts();
    expect(steps.map((s) => s.step_id).sort()).toEqual(tests.map(stepId).sort());
    for (const test of tests) {
      const step = steps.find((s) => s.step_id === stepId(test))!;
      expect(step.passed, step.step_id).toBe(test.state === 'passed');
      expect(junit.get(`fixtures/hostile/${file}.storyboard.yaml > ${test.fullName}`), test.fullName).toBe(
        test.state === 'failed',
      );
    }
  });
});

describe('hostile storyboards', () => {
  it.each(LOAD_ERRORS)('$file fails alone, as a located load error that the report lists', ({ file, rule, says }) => {
    const tests = testsOf(file);
    expect(tests.map((t) => [t.name, t.state])).toEqual([[`loads without errors (${rule})`, 'failed']]);
    expect(tests[0]!.errors[0]!.message).toMatch(says);
    const listed = report.load_errors.find((e: any) => e.file === `fixtures/hostile/${file}.storyboard.yaml`);
    expect(listed?.message).toMatch(says);
  });

  it('a test kit outside the project is never read: nothing it holds reaches the agent or any output', () => {
    for (const call of agent.calls) {
      const seen = JSON.stringify(call);
      for (const value of OUTSIDE_VALUES) expect(seen).not.toContain(value);
    }
    expect(agent.calls.some((c) => c.principal.includes('outside'))).toBe(false);
    for (const [name, text] of Object.entries(outputs))
      for (const value of OUTSIDE_VALUES) expect(text, name).not.toContain(value);
  });
});

describe('the report', () => {
  it('is complete: every step of every storyboard, the load errors, a summary that adds up', () => {
    const stepTests = run.tests.filter((t) => t.meta?.adcp);
    const steps = report.storyboards.flatMap((s: any) => s.steps);
    expect(steps).toHaveLength(stepTests.length);
    expect(report.summary.total_steps).toBe(steps.length);
    expect(report.summary.steps_failed).toBe(stepTests.filter((t) => t.state === 'failed').length);
    expect(report.summary.steps_passed).toBe(stepTests.filter((t) => t.state === 'passed').length);
    expect(report.load_errors).toHaveLength(LOAD_ERRORS.length);
    expect(report.storyboards.map((s: any) => s.storyboard_id).sort()).toEqual(CASES.map((c) => c.id).sort());
  });

  it('is valid against the contract schema', () => {
    assertValidContractReport(report);
  });

  it('keeps deeply nested answers, cut at 64 levels, and the run survives them', () => {
    const deep = reportSteps('hostile_deep').find((s) => s.step_id === 'hostile_deep_3500');
    expect(JSON.stringify(deep.response.payload)).toContain('[cut: nested deeper than 64 levels]');
  });

  it('keeps an answer\'s "__proto__" key as data (an own key, read by its checks), and no prototype changes', () => {
    const step = reportSteps('hostile_proto_keys').find((s) => s.step_id === 'tolerated_proto_keys');
    expect(step.passed).toBe(true);
    const structured = step.response.payload.structuredContent;
    expect(Object.hasOwn(structured, '__proto__')).toBe(true);
    expect(structured.__proto__).toEqual({ polluted: 'yes' });
    expect(structured.constructor).toEqual({ prototype: { polluted: 'yes' } });
  });

  it("bounds what an agent's error page puts in the record and on the terminal", () => {
    const step = reportSteps('hostile_http_errors').find((s) => s.step_id === 'hostile_huge_500');
    expect(step.error.length).toBeLessThan(17 * 1024);
    const shown = testsOf('http-errors').find((t) => stepId(t) === 'hostile_huge_500')!;
    expect(JSON.stringify(shown.errors).length).toBeLessThan(6_000);
  });

  it("a valid answer after Vitest's default 5 s test timeout passes — in the terminal and in the report", () => {
    const test = testsOf('slow').find((t) => stepId(t) === 'tolerated_slow')!;
    const step = reportSteps('hostile_slow').find((s) => s.step_id === 'tolerated_slow');
    expect(test.state).toBe('passed');
    expect(step).toMatchObject({ passed: true });
    expect(step.duration_ms).toBeGreaterThan(5_000);
  });
});

describe('the terminal and every file written', () => {
  it("show no raw control character: the agent's escape sequences arrive, visibly escaped", () => {
    for (const [name, text] of Object.entries(outputs)) expect(RAW_CONTROL.exec(text)?.[0], name).toBeUndefined();
    // What was sent is shown, as text: `\u{1b}[2J`, not a cleared screen.
    expect(run.stderr).toContain('\\u{1b}[2J\\u{1b}[3J\\u{1b}[H');
    expect(run.stderr).toContain('\\u{1b}]52;c;');
    expect(run.stderr).toContain('\\u{9b}2J\\u{202e}evil\\u{1b}[8m');
  });

  it('show no planted secret, in any spelling (raw, JSON-escaped once or twice, XML-escaped, URL-encoded)', () => {
    // The agent did receive them: the operator's token and the principal's key as Bearer credentials, the URL's.
    expect(agent.calls.map((c) => c.principal)).toEqual(
      expect.arrayContaining([`key:${TOKEN}`, `key:${PRINCIPAL_KEY}`]),
    );
    const spellings = (secret: string) => {
      const once = JSON.stringify(secret).slice(1, -1);
      return [
        secret,
        once,
        JSON.stringify(once).slice(1, -1),
        secret.replaceAll('"', '&quot;'),
        secret.replaceAll('"', '&#34;'),
        encodeURIComponent(secret),
      ];
    };
    for (const secret of [TOKEN, PRINCIPAL_KEY, URL_SECRET]) {
      for (const spelling of spellings(secret)) {
        for (const [name, text] of Object.entries(outputs))
          expect(text.includes(spelling), `${name} shows ${spelling}`).toBe(false);
        // What every other Vitest reporter (IDE, JSON, blob) is handed: errors and test meta.
        expect(
          JSON.stringify(run.tests).includes(JSON.stringify(spelling).slice(1, -1)),
          `test results show ${spelling}`,
        ).toBe(false);
      }
    }
    expect(outputs.stderr).toContain('[redacted]');
  });
});
