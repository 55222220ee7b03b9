/**
 * The layer rule (lint/layer-rule.mjs) on the cases it exists for: downward imports pass; upward, sideways (another
 * folder of the same layer) and unknown folders fail, for every import form (static, type-only, re-export, dynamic,
 * require). And the repository's ESLint config applies it, with the cycle rule, to every file of src/ (whether src/
 * passes is `npm run lint`'s, CI's first step).
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
    // roles/ through its registry; inside roles/, any of its modules.
    { filename: at('compile/compile.ts'), code: "import { BUILTIN_ROLES } from '../roles/index.js';" },
    { filename: at('roles/index.ts'), code: "import { x } from './request-signing/vectors.js';" },
    {
      filename: join(root, 'test', 'roles', 'x.test.ts'),
      code: "import { x } from '../../src/roles/brand-jwks/jwks.js';",
    },
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
    // A role's own module from outside roles/: only the registry.
    {
      filename: at('compile/compile-cache.ts'),
      code: "import { requestSigningVectorsDir } from '../roles/request-signing/vectors.js';",
      errors: [
        {
          message:
            /compile may not import a role's own module \(roles\/request-signing\/vectors\.js\): import it from roles\/index\.ts/,
        },
      ],
    },
    {
      filename: at('jest/transformer.cts'),
      code: "const v = require('../roles/webhook-receiver/webhooks.js');",
      errors: 1,
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
  // Whether src/ passes is `npm run lint`'s to say (CI's first step, which fails the build): linting all of src/ here
  // again cost 10–18 s of every test run. This holds the wiring: every source file is under both rules, as errors.
  it('puts every file of src/ under the layer rule and the cycle rule, as errors', async () => {
    const eslint = new ESLint({ cwd: root });
    for (const file of ['engine/run.ts', 'plugin/run-host.ts', 'cli.ts', 'jest/environment.cts']) {
      const config = (await eslint.calculateConfigForFile(at(file))) as { rules: Record<string, unknown> };
      const level = (rule: string) => [config.rules[rule]].flat()[0];
      expect([file, level('layers/downward-only'), level('import-x/no-cycle')]).toEqual([file, 2, 2]);
    }
  });
});
