/**
 * A Jest user's project, for the Jest tests (the smoke run in `npm test`, the packed version matrix): a storyboard with a
 * passing and a failing step, a hand-written test using the matchers, and how to read `jest --json` results.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadStoryboard } from '../../src/storyboard/load.js';

/** A storyboard of one passing step (`caps`): the packed-package test's smoke storyboard. */
const PASSING_STEP_LINES = [
  'id: my_smoke',
  'title: My smoke test',
  'phases:',
  '  - id: discovery',
  '    title: Discovery',
  '    steps:',
  '      - id: caps',
  '        title: Capabilities',
  '        task: get_adcp_capabilities',
  '        sample_request:',
  '          context: { correlation_id: smoke }',
  '        validations:',
  '          - check: response_schema',
  '          - check: field_value',
  '            path: context.correlation_id',
  '            value: smoke',
];

/** The passing storyboard as a file's text. */
export const PASSING_STORYBOARD = [...PASSING_STEP_LINES, ''].join('\n');

/** The same storyboard with a second, failing step (`caps_wrong`). */
export const USER_STORYBOARD = [
  ...PASSING_STEP_LINES,
  '      - id: caps_wrong',
  '        title: Capabilities, expecting another correlation id',
  '        task: get_adcp_capabilities',
  '        sample_request:',
  '          context: { correlation_id: smoke }',
  '        validations:',
  '          - check: field_value',
  '            path: context.correlation_id',
  '            value: not-smoke',
  '',
].join('\n');

/** The failing check's line and column (`- check: field_value` of caps_wrong), 1-based. */
export const FAILING_CHECK = { line: 23, column: 13 };

/** Writes the storyboard and a matchers test (CommonJS, as Jest's default babel-jest runs it) into `project`. */
export function writeJestProjectFiles(project: string): void {
  mkdirSync(join(project, 'storyboards'), { recursive: true });
  writeFileSync(join(project, 'storyboards', 'smoke.storyboard.yaml'), USER_STORYBOARD);
  writeFileSync(
    join(project, 'storyboards', 'auth.test.js'),
    [
      "test('refuses unauthenticated calls (vitest-adcp matchers in Jest)', async () => {",
      '  await expect(process.env.ADCP_AGENT_URL).toRejectUnauthenticated();',
      '  expect({ status: 200, headers: {} }).not.toRejectUnauthenticated();',
      '});',
      '',
    ].join('\n'),
  );
}

export interface JestAssertion {
  fullName: string;
  title: string;
  status: 'passed' | 'failed' | 'pending' | 'skipped' | 'todo';
  location?: { line: number; column: number } | null;
  failureMessages: string[];
}
export interface JestFileResult {
  name: string;
  status: string;
  message: string;
  assertionResults: JestAssertion[];
}
export interface JestJson {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTotalTests: number;
  testResults: JestFileResult[];
}

export function readJestJson(file: string): JestJson {
  return JSON.parse(readFileSync(file, 'utf8')) as JestJson;
}

/** Each step's YAML position by step id, from our own loader: where Jest's location of that step's test must be. */
export function stepLocations(file: string): Map<string, { line: number; column: number }> {
  const loaded = loadStoryboard(readFileSync(file, 'utf8'), file, {});
  if (!loaded.ok) throw new Error(`${file} does not load`);
  const out = new Map<string, { line: number; column: number }>();
  for (const phase of loaded.storyboard.phases)
    for (const step of phase.steps) out.set(step.id, { line: step.loc.line, column: step.loc.column });
  return out;
}

/** `Title (step_id)` → step_id. */
export function stepIdOf(title: string): string {
  return /\(([^()]+)\)$/.exec(title)?.[1] ?? title;
}

/**
 * A run's storyboard tests as `[fullName, status, line:column]`, sorted — from Jest's `--json` or Vitest's `json`
 * reporter (the same format): what must be equal between the two, and across versions.
 */
export function storyboardVerdicts(
  results: JestJson,
  files: RegExp = /storyboard\.yaml$|capability-discovery\.yaml$/,
): [string, string, string][] {
  return results.testResults
    .filter((r) => files.test(r.name))
    .flatMap((r) =>
      r.assertionResults.map((a): [string, string, string] => [
        a.fullName,
        a.status,
        a.location ? `${a.location.line}:${a.location.column}` : '?',
      ]),
    )
    .sort((a, b) => a[0].localeCompare(b[0]));
}

/** Where the preset writes a project's corpus stub files (src/jest/preset.cts), for cleaning up after a run. */
export function corpusStubDir(rootDir: string): string {
  return join(rootDir, '.adcp-corpus');
}

/**
 * A contract report file without what differs between runs of the same storyboards by different runners: times, the
 * framework's project name, and (given) the repository's own path.
 */
export function comparableReport(file: string, repo?: string): unknown {
  const drop = new Set(['duration_ms', 'generated_at', 'started_at', 'finished_at', 'project']);
  let text = readFileSync(file, 'utf8');
  if (repo) text = text.replaceAll(JSON.stringify(repo).slice(1, -1), '<repo>');
  return JSON.parse(text, (key, value) => (drop.has(key) ? undefined : value));
}
