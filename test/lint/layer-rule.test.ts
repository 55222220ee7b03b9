/**
 * The layer rule (lint/layer-rule.mjs) on the cases it exists for: downward imports pass; upward, sideways (another
 * folder of the same layer) and unknown folders fail, for every import form (static, type-only, re-export, dynamic,
 * require). And the repository's own src/ passes it: run through ESLint's API, so a broken config fails too.
 */
import { join } from 'node:path';
import { ESLint, RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { downwardOnly } from '../../lint/layer-rule.mjs';

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

const root = join(import.meta.dirname, '..', '..');
const at = (path: string) => join(root, 'src', path);
const tester = new RuleTester({ languageOptions: { parser: tseslint.parser } });

tester.run('layers/downward-only', downwardOnly, {
  valid: [
    { filename: at('engine/run.ts'), code: "import { x } from '../model/records.js';" },
    { filename: at('engine/run.ts'), code: "import { x } from './gate.js';" },
    { filename: at('engine/enrich/index.ts'), code: "import { x } from '../run.js';" },
    { filename: at('cli.ts'), code: "import { x } from './cli/init.js';" },
    { filename: at('cli/init.ts'), code: "import { x } from '../plugin/plugin.js';" },
    { filename: at('engine/run.ts'), code: "import { x } from 'undici';" },
    { filename: join(root, 'test', 'engine', 'run.test.ts'), code: "import { x } from '../../src/cli.js';" },
  ],
  invalid: [
    {
      filename: at('engine/run.ts'),
      code: "import { x } from '../roles/index.js';",
      errors: [{ message: /engine \(layer 7: engine\) may not import roles \(layer 8: roles\)/ }],
    },
    { filename: at('model/records.ts'), code: "import type { X } from '../engine/run.js';", errors: 1 },
    { filename: at('transport/mcp.ts'), code: "export { x } from '../checks/index.js';", errors: 1 },
    { filename: at('transport/mcp.ts'), code: "export * from '../report/format.js';", errors: 1 },
    { filename: at('transport/mcp.ts'), code: "const m = await import('../engine/run.js');", errors: 1 },
    { filename: at('jest/suite.ts'), code: "const m = require('../plugin/plugin.js');", errors: 1 },
    // Sideways: report and compile share a layer, so neither may import the other.
    {
      filename: at('report/build.ts'),
      code: "import { x } from '../compile/compile.js';",
      errors: [{ message: /layer 9/ }],
    },
    {
      filename: at('engine/run.ts'),
      code: "import { x } from '../nowhere/x.js';",
      errors: [{ message: /src\/nowhere has no layer/ }],
    },
    {
      filename: at('nowhere/x.ts'),
      code: "import { x } from '../model/records.js';",
      errors: [{ message: /src\/nowhere has no layer/ }],
    },
  ],
});

describe('the repository', () => {
  it('passes the layer rule and has no import cycle in src/', { timeout: 120_000 }, async () => {
    const eslint = new ESLint({
      cwd: root,
      overrideConfig: { rules: { complexity: 'off', 'max-lines': 'off', 'max-lines-per-function': 'off' } },
      ruleFilter: ({ ruleId }) => ruleId === 'layers/downward-only' || ruleId === 'import-x/no-cycle',
    });
    const results = await eslint.lintFiles(['src']);
    const problems = results.flatMap((r) =>
      r.messages.map((m) => `${r.filePath.slice(root.length + 1)}:${m.line} ${m.ruleId}: ${m.message}`),
    );
    expect(problems).toEqual([]);
  });
});
