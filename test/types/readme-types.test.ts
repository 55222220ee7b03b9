/**
 * The matchers' types as a user gets them, checked by tsc on files written as the README shows: the package as
 * `npm pack` ships it (unpacked once per run, test/helpers/unpacked.ts) linked into a user project as
 * node_modules/vitest-adcp, resolved through package.json `exports` as an installed package is. The matchers are
 * registered with `setupFiles: ['vitest-adcp/matchers']`, which TypeScript cannot see: their types must come with the
 * README's own import (`vitest-adcp`), or with the one line the README gives for a test file that imports nothing from
 * the package.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runNode } from '../helpers/run-vitest.js';
import { userProjectWithPackage } from '../helpers/unpacked.js';

const scratch = join(repoRoot, '.vitest-adcp', `types-${process.pid}`);
const user = join(scratch, 'user');
const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

/** The README's hand-written test: the ```ts block that creates the client. */
const readmeClientTest =
  /```ts\n(import \{ afterAll, expect, it \} from 'vitest';\nimport \{ createAdcpClient[^\n]*\n[\s\S]*?)```/.exec(
    readme,
  )?.[1];
/** The line the README gives for a test file importing nothing from the package. */
const referenceLine = /^\/\/\/ <reference types="vitest-adcp\/matchers" \/>$/m.exec(readme)?.[0];
/** A user's test of the agent URL only: the matchers, and no import from vitest-adcp. */
const URL_ONLY_TEST = [
  "import { expect, it } from 'vitest';",
  "it('refuses unauthenticated calls', async () => {",
  '  await expect(process.env.ADCP_AGENT_URL).toRejectUnauthenticated({ task: "list_creatives" });',
  "  await expect(process.env.ADCP_AGENT_URL).toExposeWwwAuthenticate({ scheme: 'Bearer', params: { realm: expect.stringContaining('agent') } });",
  '});',
  '',
].join('\n');

/** The README's config, with the matchers as a setup file as the README registers them. */
const README_CONFIG = [
  "import { defineConfig } from 'vitest/config';",
  "import { adcpStoryboards } from 'vitest-adcp';",
  '',
  'export default defineConfig({',
  `  ${/^ {2}(plugins: \[adcpStoryboards\(.*\)\],)$/m.exec(readme)![1]}`,
  `  ${/^(test: \{ setupFiles: \['vitest-adcp\/matchers'\] \})/m.exec(readme)![1]},`,
  '});',
  '',
].join('\n');

beforeAll(() => userProjectWithPackage(scratch, user), 420_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** tsc on one user file in a project of its own; `types` as the user's tsconfig would have it. */
async function typecheck(name: string, text: string, types: string[] = [], alongside: string[] = []) {
  writeFileSync(join(user, name), text);
  const config = `tsconfig.${name}.json`;
  writeFileSync(
    join(user, config),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node', ...types],
      },
      files: [name, ...alongside],
    }),
  );
  const run = await runNode([tsc, '-p', config], { cwd: user });
  return { exitCode: run.exitCode, output: (run.stdout + run.stderr).trim() };
}

describe("the matchers' types with setupFiles: ['vitest-adcp/matchers']", () => {
  it("the README's hand-written test compiles as written: its import of vitest-adcp brings the matchers' types", async () => {
    expect(readmeClientTest).toMatch(/toRejectUnauthenticated\(\)/);
    expect(readmeClientTest).not.toMatch(/import 'vitest-adcp\/matchers'/);
    const result = await typecheck('readme.test.ts', readmeClientTest!);
    expect(result.output).toBe('');
    expect(result.exitCode).toBe(0);
  }, 60_000);

  it('a test importing nothing from vitest-adcp needs the README\'s one line, or "types" in tsconfig.json', async () => {
    const without = await typecheck('url-only.test.ts', URL_ONLY_TEST);
    expect(without.exitCode).toBe(2);
    expect(without.output).toMatch(
      /error TS2339: Property 'toRejectUnauthenticated' does not exist on type 'Assertion<string \| undefined>'/,
    );
    expect(referenceLine).toBeDefined();
    const withLine = await typecheck('url-only-referenced.test.ts', `${referenceLine}\n${URL_ONLY_TEST}`);
    expect(withLine.output).toBe('');
    expect(withLine.exitCode).toBe(0);
    expect(readme).toContain('"types": ["vitest-adcp/matchers"]');
    const withTypes = await typecheck('url-only-types.test.ts', URL_ONLY_TEST, ['vitest-adcp/matchers']);
    expect(withTypes.output).toBe('');
    expect(withTypes.exitCode).toBe(0);
    // "the config's import counts, when tsconfig.json includes vitest.config.ts"
    expect(readme).toContain("the config's import counts, when `tsconfig.json` includes\n`vitest.config.ts`");
    writeFileSync(join(user, 'vitest.config.ts'), README_CONFIG);
    const withConfig = await typecheck('url-only-config.test.ts', URL_ONLY_TEST, [], ['vitest.config.ts']);
    expect(withConfig.output).toBe('');
    expect(withConfig.exitCode).toBe(0);
  }, 60_000);

  it("the types refuse what the matchers refuse, through the package's own entry", async () => {
    const result = await typecheck(
      'wrong.test.ts',
      `/// <reference types="vitest-adcp/matchers" />\nimport { expect } from 'vitest';\nexpect({}).toHaveAdcpErrorCode(42);\n`,
    );
    expect(result.exitCode).toBe(2);
    expect(result.output).toMatch(/wrong\.test\.ts\(3,32\): error TS2345/);
  }, 60_000);
});
