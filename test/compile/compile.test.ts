import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';
import { describe, expect, it } from 'vitest';
import { compileStoryboard, testTitle } from '../../src/compile/compile.js';

const corpus = join(import.meta.dirname, '..', '..', 'node_modules', '@adcp', 'sdk', 'compliance', 'cache', '3.0.6');
const file = join(corpus, 'universal', 'capability-discovery.yaml');
const source = readFileSync(file, 'utf8');

/** Where, in the generated code, each `it(`/`describe(` call with this title starts. */
function callSite(code: string, fn: string, title: string): { line: number; column: number } {
  const needle = `${fn}(${JSON.stringify(title)}`;
  const index = code.indexOf(needle);
  expect(index, `${needle} in generated code`).toBeGreaterThan(-1);
  const before = code.slice(0, index).split('\n');
  return { line: before.length, column: before.at(-1)!.length };
}

describe('compileStoryboard', () => {
  const result = compileStoryboard(source, file, { runtime: 'vitest-adcp/runtime', corpusRoot: corpus });
  const storyboard = result.storyboard!;
  const map = new TraceMap(result.map as any);

  it('makes one describe per storyboard and phase and one it per step, titled "title (id)"', () => {
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(result.code).toContain(`describe(${JSON.stringify('Capability discovery (capability_discovery)')}`);
    for (const phase of storyboard.phases) {
      expect(result.code).toContain(`describe(${JSON.stringify(testTitle(phase.title, phase.id))}`);
      for (const step of phase.steps)
        expect(result.code).toContain(`it(${JSON.stringify(testTitle(step.title, step.id))}`);
    }
  });

  it("maps every describe( and it( call to its node's line and column in the YAML", () => {
    // Read off capability-discovery.yaml (3.0.6) by hand: the storyboard starts the file; `  - id: protocol_discovery`
    // is line 40 (its mapping starts at column 5); `      - id: get_capabilities…` lines 48 and 93 (column 9).
    const sites: [fn: string, title: string, line: number, column: number][] = [
      ['describe', 'Capability discovery (capability_discovery)', 1, 1],
      ['describe', 'Protocol and capability discovery (protocol_discovery)', 40, 5],
      ['it', 'Discover agent capabilities (get_capabilities)', 48, 9],
      ['it', 'Discover capabilities filtered by protocol (get_capabilities_filtered)', 93, 9],
    ];
    for (const [fn, title, line, column] of sites) {
      // Source maps count columns from 0.
      expect(originalPositionFor(map, callSite(result.code, fn, title)), `${fn}(${title})`).toMatchObject({
        source: 'capability-discovery.yaml',
        line,
        column: column - 1,
      });
    }
    expect(storyboard.phases.flatMap((p) => p.steps)).toHaveLength(2);
  });

  it('quotes every value it generates (titles with quotes and newlines stay inert)', () => {
    const yaml = [
      'id: q',
      'title: "a \\"quoted\\" </script> title"',
      'phases:',
      '  - id: p',
      '    title: "line\\nbreak`${x}`"',
      '    steps:',
      '      - id: s',
      '        task: get_products',
      '',
    ].join('\n');
    const out = compileStoryboard(yaml, '/tmp/q.storyboard.yaml', { runtime: 'r' });
    expect(out.code).toContain(JSON.stringify('a "quoted" </script> title (q)'));
    expect(out.code).toContain(JSON.stringify('line\nbreak`${x}` (p)'));
    // It parses as a module.
    expect(
      () =>
        new Function(
          out.code
            .replace(/^import .*$/gm, '')
            .replace(/^export default .*$/gm, '')
            .replace(/import\.meta\.url/g, '""'),
        ),
    ).not.toThrow();
  });

  it('compiles a file that does not load into one failing test placed at the error', () => {
    const yaml = [
      'id: broken',
      'title: Broken',
      'phases:',
      '  - id: p',
      '    steps:',
      '      - id: s',
      '        title: no task here',
      '',
    ].join('\n');
    const out = compileStoryboard(yaml, '/tmp/broken.storyboard.yaml', { runtime: 'r' });
    expect(out.storyboard).toBeUndefined();
    // The step `      - id: s` (line 6, column 9) lacks its task.
    expect(out.diagnostics[0]).toMatchObject({ rule: 'schema', line: 6, column: 9 });
    const site = callSite(out.code, 'it', 'loads without errors (schema)');
    expect(originalPositionFor(new TraceMap(out.map as any), site)).toMatchObject({ line: 6, column: 8 });
  });

  it('a misspelt key fails the load by default; with strictKeys: false its warning goes to the run, for the report and JUnit', () => {
    const yaml = [
      'id: typo',
      'title: Typo',
      'phases:',
      '  - id: p',
      '    steps:',
      '      - id: s',
      '        task: get_products',
      '        validation: []',
      '',
    ].join('\n');
    const strict = compileStoryboard(yaml, '/tmp/typo.storyboard.yaml', { runtime: 'r' });
    expect(strict.storyboard).toBeUndefined();
    expect(strict.code).toContain(`it(${JSON.stringify('loads without errors (unknown_key)')}`);
    const lenient = compileStoryboard(yaml, '/tmp/typo.storyboard.yaml', { runtime: 'r', strictKeys: false });
    const warning =
      '/tmp/typo.storyboard.yaml:8:9: warning: [unknown_key] unknown key "validation" in step "s" (did you mean "validations"?)';
    expect(lenient.code).toContain(`const suite = storyboardSuite(storyboard, ${JSON.stringify([warning])});`);
    // A clean storyboard compiles as before.
    expect(result.code).toContain('const suite = storyboardSuite(storyboard);');
  });
});
