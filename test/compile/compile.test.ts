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
      for (const step of phase.steps) expect(result.code).toContain(`it(${JSON.stringify(testTitle(step.title, step.id))}`);
    }
  });

  it("maps every step's it( call to the step's own line in the YAML", () => {
    for (const phase of storyboard.phases) {
      const p = callSite(result.code, 'describe', testTitle(phase.title, phase.id));
      expect(originalPositionFor(map, p)).toMatchObject({ source: 'capability-discovery.yaml', line: phase.loc.line, column: phase.loc.column - 1 });
      for (const step of phase.steps) {
        const site = callSite(result.code, 'it', testTitle(step.title, step.id));
        const original = originalPositionFor(map, site);
        expect(original).toMatchObject({ source: 'capability-discovery.yaml', line: step.loc.line, column: step.loc.column - 1 });
        expect(source.split('\n')[step.loc.line - 1]).toContain(`id: ${step.id}`);
      }
    }
  });

  it('quotes every value it generates (titles with quotes and newlines stay inert)', () => {
    const yaml = ['id: q', 'title: "a \\"quoted\\" </script> title"', 'phases:', '  - id: p', '    title: "line\\nbreak`${x}`"', '    steps:', '      - id: s', '        task: get_products', ''].join('\n');
    const out = compileStoryboard(yaml, '/tmp/q.storyboard.yaml', { runtime: 'r' });
    expect(out.code).toContain(JSON.stringify('a "quoted" </script> title (q)'));
    expect(out.code).toContain(JSON.stringify('line\nbreak`${x}` (p)'));
    // It parses as a module.
    expect(() => new Function(out.code.replace(/^import .*$/gm, '').replace(/^export default .*$/gm, '').replace(/import\.meta\.url/g, '""'))).not.toThrow();
  });

  it('compiles a file that does not load into one failing test placed at the error', () => {
    const yaml = ['id: broken', 'title: Broken', 'phases:', '  - id: p', '    steps:', '      - id: s', '        title: no task here', ''].join('\n');
    const out = compileStoryboard(yaml, '/tmp/broken.storyboard.yaml', { runtime: 'r' });
    expect(out.storyboard).toBeUndefined();
    const primary = out.diagnostics[0]!;
    const site = callSite(out.code, 'it', `loads without errors (${primary.rule})`);
    expect(originalPositionFor(new TraceMap(out.map as any), site)).toMatchObject({ line: primary.line, column: primary.column - 1 });
  });
});
