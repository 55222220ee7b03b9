/**
 * `framework: 'jest'`: the same module shape as for Vitest, in CommonJS, with callbacks Jest does not read as `done`.
 * (The run of such a module under real Jest is test/e2e/jest.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';
import { describe, expect, it } from 'vitest';
import { compileStoryboard } from '../../src/compile/compile.js';
import { repoRoot } from '../helpers/run-vitest.js';
import { USER_STORYBOARD } from '../helpers/jest-project.js';

describe('compile for Jest', () => {
  const out = compileStoryboard(USER_STORYBOARD, '/p/smoke.storyboard.yaml', {
    runtime: '/r/runtime.cjs',
    framework: 'jest',
  });

  it('requires Jest globals and the runtime (CommonJS), and never imports vitest', () => {
    const [first, second] = out.code.split('\n');
    expect(first).toBe('const { describe, it, afterAll } = require("@jest/globals");');
    expect(second).toBe('const { storyboardSuite, loadFailureSuite } = require("/r/runtime.cjs");');
    expect(out.code).not.toMatch(/\bimport\b|from "vitest"/);
  });

  it("gives every it a callback of no parameter (one would be Jest's done) and the step timeout as third argument", () => {
    const its = out.code.split('\n').filter((l) => l.startsWith('it('));
    expect(its).toEqual([
      'it("Capabilities (caps)", () => suite.step("discovery", "caps"), suite.timeout());',
      'it("Capabilities, expecting another correlation id (caps_wrong)", () => suite.step("discovery", "caps_wrong"), suite.timeout());',
    ]);
    expect(out.code).not.toContain('(ctx)');
  });

  it('maps each it to its step line, as for Vitest', () => {
    const map = new TraceMap(out.map as any);
    const lines = out.code.split('\n');
    const at = (needle: string) => {
      const line = lines.findIndex((l) => l.includes(needle));
      return originalPositionFor(map, { line: line + 1, column: 0 });
    };
    expect([at('"caps")').line, at('"caps_wrong")').line]).toEqual([7, 17]);
  });

  it('compiles a load failure and a storyboard without phases for Jest too', () => {
    const broken = compileStoryboard('id: x\nphases: 3\n', '/p/b.storyboard.yaml', { runtime: 'r', framework: 'jest' });
    expect(broken.code).toMatch(/^it\("loads without errors \([a-z_]+\)", \(\) => failure\.fail\(\)\);$/m);
    const empty = compileStoryboard('id: e\ntitle: E\nphases: []\n', '/p/e.storyboard.yaml', {
      runtime: 'r',
      framework: 'jest',
    });
    expect(empty.code).toContain('it("no phases (e)", () => suite.noPhases());');
    // The Vitest output is unchanged by the option's existence.
    const vitest = compileStoryboard(
      readFileSync(join(repoRoot, 'fixtures', 'storyboards', 'discovery.storyboard.yaml'), 'utf8'),
      '/p/d.storyboard.yaml',
      { runtime: 'r' },
    );
    expect(vitest.code.split('\n')[0]).toBe(
      'import { describe, it, afterAll, storyboardSuite, loadFailureSuite, storyboardData } from "r";',
    );
  });
});
