/**
 * The signed_requests storyboard in the compiled test module: its vector
 * phases, empty in the YAML, show one `it` per conformance vector (the ids the
 * engine grades and the reference runner reports), mapped to the phase's line.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';
import { beforeEach, describe, expect, it } from 'vitest';
import { compileStoryboard } from '../../src/compile/compile.js';
import type { PlanSettings, RunnerRole } from '../../src/engine/role.js';
import { BUILTIN_ROLES } from '../../src/roles/index.js';
import { resolveCorpus } from '../../src/corpus.js';
import { signingVectorsFor } from '../../src/roles/request-signing/vectors.js';

const corpus = resolveCorpus(undefined);
const file = join(corpus.root, 'universal', 'signed-requests.yaml');
const source = readFileSync(file, 'utf8');
const lineOf = (pattern: RegExp) => source.split('\n').findIndex((l) => pattern.test(l)) + 1;
const vectorFiles = (polarity: string) =>
  readdirSync(join(corpus.root, 'test-vectors', 'request-signing', polarity))
    .filter((f) => f.endsWith('.json'))
    .sort();

describe('compiling signed-requests.yaml', () => {
  // Compiled for each test, not once at collection: code reached at collection is "static" to Stryker, whose mutants
  // there no test was seen to cover (docs/architecture.md, "Testing the tests").
  let code: string;
  let diagnostics: ReturnType<typeof compileStoryboard>['diagnostics'];
  let trace: TraceMap;
  beforeEach(() => {
    const compiled = compileStoryboard(source, file, {
      runtime: 'vitest-adcp/runtime',
      corpusRoot: corpus.root,
      // The compiler reads no file: the caller reads the vectors (as the plugin does).
      signingVectors: signingVectorsFor({ file }, { corpusRoot: corpus.root }),
    });
    code = compiled.code;
    diagnostics = compiled.diagnostics;
    trace = new TraceMap(compiled.map as any);
  });
  const originalLineOf = (snippet: string) => {
    const index = code.indexOf(snippet);
    expect(index, snippet).toBeGreaterThanOrEqual(0);
    const before = code.slice(0, index).split('\n');
    return originalPositionFor(trace, { line: before.length, column: before.at(-1)!.length }).line;
  };

  it('compiles without errors, and with no empty-phase placeholder', () => {
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(code).not.toContain('it.todo(');
  });

  it('emits one it per vector file, in file order, titled with the vector id and name', () => {
    for (const [phase, polarity] of [
      ['positive_vectors', 'positive'],
      ['negative_vectors', 'negative'],
    ]) {
      const positions = vectorFiles(polarity!).map((f) =>
        code.indexOf(`suite.step(ctx, "${phase}", "${polarity}-${f.replace(/\.json$/, '')}")`),
      );
      expect(positions.every((p) => p >= 0)).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    }
    expect(code).toContain(
      'it("001-basic-post: Basic POST, Ed25519, no content-digest coverage (positive-001-basic-post)", { meta: suite.planned("positive_vectors", "positive-001-basic-post"), timeout: suite.timeout() }, (ctx) => suite.step(ctx, "positive_vectors", "positive-001-basic-post"));',
    );
    expect(code).toContain(
      '(negative-020-rate-abuse)", { meta: suite.planned("negative_vectors", "negative-020-rate-abuse"), timeout: suite.timeout() }, (ctx) => suite.step(ctx, "negative_vectors", "negative-020-rate-abuse"));',
    );
  });

  it("maps every vector's it to its phase's line", () => {
    expect(originalLineOf('it("001-basic-post:')).toBe(lineOf(/^\s*- id: positive_vectors\s*$/));
    expect(originalLineOf('it("012-ipv6-authority-default-port-stripped:')).toBe(
      lineOf(/^\s*- id: positive_vectors\s*$/),
    );
    expect(originalLineOf('it("027-webhook-registration-authentication-unsigned:')).toBe(
      lineOf(/^\s*- id: negative_vectors\s*$/),
    );
    expect(originalLineOf('it("Verify the agent declares request_signing.supported (get_capabilities)"')).toBe(
      lineOf(/^\s*- id: get_capabilities\s*$/),
    );
  });
});

describe('the plan settings compile gives the roles', () => {
  /** The built-in roles and one that only records what its plan was given. */
  const watched = () => {
    const given: PlanSettings[] = [];
    const watcher: RunnerRole = {
      name: 'watcher',
      tasks: new Set(),
      plan: (phases, _storyboard, settings) => (given.push(settings), phases),
      open: () => ({}),
    };
    return { given, roles: [...BUILTIN_ROLES, watcher] };
  };

  it("are the caller's vectors and corpus root, as given", () => {
    const signingVectors = signingVectorsFor({ file }, { corpusRoot: corpus.root });
    const { given, roles } = watched();
    compileStoryboard(source, file, { runtime: 'r', corpusRoot: corpus.root, signingVectors, roles });
    expect(given).toEqual([{ corpusRoot: corpus.root, signingVectors }]);
  });

  it('say the vectors were not read when the caller gave none: no role reads them, each vector phase fails', () => {
    const { given, roles } = watched();
    const { code } = compileStoryboard(source, file, { runtime: 'r', roles });
    const problem = 'the request-signing vectors were not read for this compilation';
    expect(given).toEqual([{ corpusRoot: undefined, signingVectors: { problem } }]);
    expect(code.match(/suite\.step\(ctx, "(positive|negative)_vectors", "[^"]+"\)/g)).toEqual([
      'suite.step(ctx, "positive_vectors", "vectors_unavailable")',
      'suite.step(ctx, "negative_vectors", "vectors_unavailable")',
    ]);
  });
});
