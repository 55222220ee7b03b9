/**
 * The shape of the compiled test module, read by running it against stub
 * `describe` / `it` / `afterAll` and a stub runtime: which suites and tests it
 * declares, nested how, calling which runtime entry points.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compileStoryboard, testTitle } from '../../src/compile/compile.js';

type Node = string | { describe: string; children: Node[] };

/**
 * Runs the generated module with stubs; returns the declared tree and the runtime calls made at import. `stored`: what
 * the stub store holds (digest → JSON), for a module that names its storyboard by digest.
 */
function declared(code: string, stored: Record<string, string> = {}) {
  const root: Node[] = [];
  const stack: Node[][] = [root];
  const calls: string[] = [];
  const timeouts: (number | undefined)[] = [];
  const metas: unknown[] = [];
  const stubs = {
    describe: (title: string, body: () => void) => {
      const node = { describe: title, children: [] as Node[] };
      stack.at(-1)!.push(node);
      stack.push(node.children);
      body();
      stack.pop();
    },
    it: Object.assign(
      // Vitest's two forms: it(title, fn, timeout) and it(title, { timeout, meta }, fn).
      (
        title: string,
        second: ((ctx: unknown) => unknown) | { timeout?: number; meta?: unknown },
        third?: number | ((ctx: unknown) => unknown),
      ) => {
        const [fn, options] =
          typeof second === 'function'
            ? [second, { timeout: third as number | undefined }]
            : [third as (ctx: unknown) => unknown, second];
        stack.at(-1)!.push(title);
        timeouts.push(options.timeout);
        if ('meta' in options) metas.push(options.meta);
        fn('ctx');
      },
      { todo: (title: string) => stack.at(-1)!.push(`todo: ${title}`) },
    ),
    afterAll: (_fn: unknown, timeout?: number) => {
      calls.push('afterAll');
      timeouts.push(timeout);
    },
    storyboardSuite: (sb: { id: string }) => {
      calls.push(`suite ${sb.id}`);
      return {
        close: () => calls.push('close'),
        noPhases: () => calls.push('noPhases'),
        step: (_ctx: unknown, phase: string, step: string) => calls.push(`step ${phase}/${step}`),
        timeout: () => SUITE_TIMEOUT,
        planned: (phase: string, step: string) => ({ adcpPlanned: `${phase}/${step}` }),
      };
    },
    storyboardData: (base64: string): unknown => JSON.parse(Buffer.from(base64, 'base64').toString('utf8')),
    storyboardStored: (digest: string): unknown => {
      calls.push(`stored ${digest}`);
      return JSON.parse(stored[digest]!);
    },
    loadFailureSuite: (diagnostics: { rule: string }[]) => {
      calls.push(`failure ${diagnostics.map((d) => d.rule).join(',')}`);
      return { fail: () => calls.push('fail') };
    },
  };
  const body = code.replace(/^import .*$/gm, '');
  new Function(...Object.keys(stubs), body)(...Object.values(stubs));
  return { tree: root, calls, timeouts, metas };
}

/** What the stub suite answers for `timeout()`: every step test and the close must be given it. */
const SUITE_TIMEOUT = 4321;

const compile = (yaml: string, file = '/tmp/s.storyboard.yaml') => compileStoryboard(yaml, file, { runtime: 'r' });

describe('the compiled module', () => {
  it('testTitle: "title (id)", or the id alone when there is no other title', () => {
    expect(testTitle('T', 'id')).toBe('T (id)');
    expect(testTitle('id', 'id')).toBe('id');
    expect(testTitle(undefined, 'id')).toBe('id');
    expect(testTitle('', 'id')).toBe('id');
  });

  it('nests one describe per phase, in order, each holding its steps; every step calls the suite', () => {
    const yaml = [
      'id: sb',
      'title: Storyboard',
      'phases:',
      '  - id: one',
      '    title: One',
      '    steps:',
      '      - id: a',
      '        title: Step A',
      '        task: get_products',
      '      - id: b',
      '        task: get_products',
      '  - id: two',
      '    title: two',
      '    steps:',
      '      - id: c',
      '        title: Step C',
      '        task: get_products',
      '  - id: empty',
      '    title: Empty',
      '    steps: []',
      '',
    ].join('\n');
    const out = compile(yaml);
    expect(out.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const { tree, calls, timeouts, metas } = declared(out.code);
    // Each step test names its step in its meta at collection, so a test that never runs is still reported (not run).
    expect(metas).toEqual([{ adcpPlanned: 'one/a' }, { adcpPlanned: 'one/b' }, { adcpPlanned: 'two/c' }]);
    expect(tree).toEqual([
      {
        describe: 'Storyboard (sb)',
        children: [
          { describe: 'One (one)', children: ['Step A (a)', 'b'] },
          { describe: 'two', children: ['Step C (c)'] },
          { describe: 'Empty (empty)', children: ['todo: no steps (empty)'] },
        ],
      },
    ]);
    expect(calls).toEqual(['suite sb', 'afterAll', 'step one/a', 'step one/b', 'step two/c']);
    // Vitest's timer sits above the engine's own bound on every step test and on the close.
    expect(timeouts).toEqual([SUITE_TIMEOUT, SUITE_TIMEOUT, SUITE_TIMEOUT, SUITE_TIMEOUT]);
  });

  it('stored: the module names its storyboard by the digest of its JSON, which it does not hold; the same tests', () => {
    const yaml = [
      'id: sb',
      'title: Storyboard',
      'phases:',
      '  - id: one',
      '    steps:',
      '      - id: a',
      '        task: get_products',
      '',
    ];
    const inline = compile(yaml.join('\n'));
    const stored = compileStoryboard(yaml.join('\n'), '/tmp/s.storyboard.yaml', {
      runtime: 'r',
      storyboardData: 'stored',
    });
    const json = JSON.stringify(stored.storyboard);
    expect(stored.stored).toEqual({ digest: createHash('sha256').update(json).digest('hex'), json });
    expect(stored.code).not.toContain(Buffer.from(json).toString('base64'));
    expect(stored.code).not.toContain('get_products');
    expect(stored.code).toContain(
      'import { describe, it, afterAll, storyboardSuite, loadFailureSuite, storyboardStored } from "r";',
    );
    const run = declared(stored.code, { [stored.stored!.digest]: json });
    expect(run.calls[0]).toBe(`stored ${stored.stored!.digest}`);
    const { tree, calls } = declared(inline.code);
    expect(run.tree).toEqual(tree);
    expect(run.calls.slice(1)).toEqual(calls);
    // Inline (the default) and Jest's module embed it; neither has a `stored`.
    expect(inline.stored).toBeUndefined();
    expect(inline.code).toContain(Buffer.from(json).toString('base64'));
    expect(inline.code).toContain(
      'import { describe, it, afterAll, storyboardSuite, loadFailureSuite, storyboardData } from "r";',
    );
    const jest = compileStoryboard(yaml.join('\n'), '/tmp/s.storyboard.yaml', {
      runtime: 'r',
      framework: 'jest',
      storyboardData: 'stored',
    });
    expect(jest.stored).toBeUndefined();
    expect(jest.code).toContain(`JSON.parse(${JSON.stringify(json)})`);
  });

  it('a storyboard without phases declares one test that reports it', () => {
    const out = compile(['id: bare', 'title: Bare', 'phases: []', ''].join('\n'));
    const { tree, calls } = declared(out.code);
    expect(tree).toEqual([{ describe: 'Bare (bare)', children: ['no phases (bare)'] }]);
    expect(calls).toEqual(['suite bare', 'afterAll', 'noPhases']);
  });

  it('a file that does not load is one failing test, under the file name (either path separator)', () => {
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
    for (const file of ['/tmp/dir/broken.storyboard.yaml', 'C:\\dir\\broken.storyboard.yaml']) {
      const { tree, calls } = declared(compile(yaml, file).code);
      expect(tree).toEqual([{ describe: 'broken.storyboard.yaml', children: ['loads without errors (schema)'] }]);
      expect(calls).toEqual(['failure schema', 'fail']);
    }
  });

  it('data mode exports the storyboard, or throws the load errors with their fixes', () => {
    const ok = compileStoryboard(['id: d', 'title: D', 'phases: []', ''].join('\n'), '/tmp/d.yaml', {
      runtime: 'r',
      mode: 'data',
    });
    expect(ok.storyboard?.id).toBe('d');
    const exported = new Function(ok.code.replace(/^export default /m, 'return '))();
    expect(exported).toMatchObject({ id: 'd', title: 'D', phases: [] });
    const bad = compileStoryboard(['id: b', 'phases: [', ''].join('\n'), '/tmp/b.yaml', { runtime: 'r', mode: 'data' });
    expect(bad.storyboard).toBeUndefined();
    const errors = bad.diagnostics.filter((d) => d.severity === 'error');
    expect(errors.length).toBeGreaterThan(0);
    const thrown = (() => {
      try {
        new Function(bad.code.replace(/^export default undefined;$/m, ''))();
      } catch (error) {
        return (error as Error).message;
      }
      return undefined;
    })();
    const render = (d: (typeof errors)[number]) =>
      `${d.file}:${d.line}:${d.column}: [${d.rule}] ${d.message}${d.hint ? ` (fix: ${d.hint})` : ''}`;
    expect(thrown).toBe(`storyboard /tmp/b.yaml does not load:\n${errors.map(render).join('\n')}`);
  });
});
