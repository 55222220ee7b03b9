/**
 * The public API as README.md's "Public API" table declares it, held to the package as `npm pack` ships it (unpacked
 * once per run: test/helpers/unpacked.ts) and linked into a user project as node_modules/vitest-adcp, so that every
 * import resolves through package.json `exports` as an installed package's does:
 *
 * - the table names exactly the entries of package.json `exports`;
 * - each entry's runtime exports (`import`, and `require` where the entry has a CommonJS build) are exactly the values
 *   the table lists for it: a new export is a decision written down here, not an accident of `export *`;
 * - a user file importing every type the table lists, from the entry it lists it under, and using the main ones as the
 *   README does, compiles.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runNode } from '../helpers/run-vitest.js';
import { userProjectWithPackage } from '../helpers/unpacked.js';

const scratch = join(repoRoot, '.vitest-adcp', `public-api-${process.pid}`);
const user = join(scratch, 'user');
const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  exports: Record<string, string | Record<string, string>>;
};

interface Row {
  entries: string[];
  /** Undefined: the row's entries are not imported by name (runtime plumbing, files). */
  values?: string[];
  types: string[];
}

const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** The rows of the README's "Public API" table. */
function publicApiTable(): Row[] {
  const section = /^## Public API\n([\s\S]*?)^## /m.exec(readme)?.[1];
  if (!section) throw new Error('README.md has no "## Public API" section');
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [entries, values, types] = line.split(' | ').map((cell) => cell.replace(/^\| |\s*\|$/g, ''));
      const names = ticked(values ?? '');
      return {
        entries: ticked(entries!).filter((name) => /^vitest-adcp(\/|$)/.test(name)),
        values: names.length > 0 ? names : undefined,
        types: ticked(types ?? ''),
      };
    });
}

const table = publicApiTable();
const named = table.filter((row) => row.values);
/** Types that take a type argument without a default. */
const GENERIC = new Set(['AdcpMatchersReturning', 'AdcpMatcherReturn']);

beforeAll(() => userProjectWithPackage(scratch, user), 420_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the public API (README.md, "Public API")', () => {
  it('lists exactly the entries of package.json "exports", each once', () => {
    const listed = table.flatMap((row) => row.entries);
    expect(new Set(listed).size).toBe(listed.length);
    const exported = Object.keys(pkg.exports).map((key) =>
      key === '.' ? 'vitest-adcp' : `vitest-adcp/${key.slice(2)}`,
    );
    expect([...listed].sort()).toEqual([...exported].sort());
    // The internal entry is built but never exported.
    expect(Object.keys(pkg.exports).filter((key) => /internal/.test(key))).toEqual([]);
  });

  it("each entry's runtime exports are exactly its values in the table (import, and require where it has one)", async () => {
    const cases = named.flatMap((row) =>
      row.entries.map((entry) => {
        const target = pkg.exports[entry === 'vitest-adcp' ? '.' : `./${entry.slice('vitest-adcp/'.length)}`]!;
        const conditions = typeof target === 'string' ? [target.endsWith('.cjs') ? 'require' : 'import'] : [];
        if (typeof target !== 'string') {
          if (target.import || (target.default && !target.default.endsWith('.cjs'))) conditions.push('import');
          if (target.require || target.default?.endsWith('.cjs')) conditions.push('require');
        }
        return { entry, conditions };
      }),
    );
    // A child process: an entry that registers matchers finds Vitest's expect, or (the Jest entries) a stand-in for
    // Jest's global one, and nothing it does reaches this worker's.
    const script = [
      "import { createRequire } from 'node:module';",
      'const require = createRequire(import.meta.url);',
      'globalThis.expect ??= { extend() {} };',
      `const cases = ${JSON.stringify(cases)};`,
      'const out = {};',
      'for (const { entry, conditions } of cases) {',
      '  for (const condition of conditions) {',
      '    try {',
      "      const m = condition === 'import' ? await import(entry) : require(entry);",
      // Importing CommonJS gives `default` (module.exports) beside the names Node detects: the table lists the latter.
      "      const names = Object.keys(m).filter((k) => !(condition === 'import' && k === 'default' && m.default === m['module.exports']) && k !== 'module.exports');",
      '      out[`${entry} (${condition})`] = names.sort();',
      '    } catch (error) {',
      '      out[`${entry} (${condition})`] = `failed: ${error?.message ?? error}`;',
      '    }',
      '  }',
      '}',
      'console.log(JSON.stringify(out));',
      'process.exit(0);',
    ].join('\n');
    writeFileSync(join(user, 'exports.mjs'), script);
    const run = await runNode([join(user, 'exports.mjs')], { cwd: user });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const actual = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, string[] | string>;
    const expected = Object.fromEntries(
      cases.flatMap(({ entry, conditions }) => {
        const values = named.find((row) => row.entries.includes(entry))!.values!;
        return conditions.map((condition) => [`${entry} (${condition})`, [...values].sort()]);
      }),
    );
    expect(actual).toEqual(expected);
  }, 120_000);

  it('a user file importing every listed type from its entry, and using the main ones, compiles', async () => {
    const imports = table
      .filter((row) => row.types.length > 0)
      .flatMap((row, r) =>
        row.entries.map((entry, e) => {
          const alias = (type: string) => `${type}_${r}_${e}`;
          return {
            line: `import type { ${row.types.map((t) => `${t} as ${alias(t)}`).join(', ')} } from '${entry}';`,
            uses: row.types.map((t) => (GENERIC.has(t) ? `${alias(t)}<unknown>` : alias(t))),
          };
        }),
      );
    const file = [
      ...imports.map((i) => i.line),
      "import { adcpStoryboards, createAdcpClient, loadStoryboardFile, openStoryboardRun, closeSharedSessions } from 'vitest-adcp';",
      "import type { AdcpStoryboardsOptions, StepOutcome, StepResult, Storyboard, AdcpStepMeta, RuntimeConfig } from 'vitest-adcp';",
      "import type { AdcpReporterOptions } from 'vitest-adcp/reporter';",
      "import type { JestPresetOptions } from 'vitest-adcp/jest';",
      "import type { AdcpJestReporterOptions } from 'vitest-adcp/jest/reporter';",
      '',
      `export type EveryListedType = [${imports.flatMap((i) => i.uses).join(', ')}];`,
      '',
      'const options: AdcpStoryboardsOptions = {',
      "  compliance: { storyboards: ['capability_discovery'], tracks: ['core'] },",
      "  agent: { url: 'http://127.0.0.1:3000/mcp', protocol: 'mcp', auth: { token: 't' } },",
      '  timeoutMs: 10_000,',
      '  sequential: true,',
      '};',
      'export const plugin = adcpStoryboards(options);',
      "export const reporter: AdcpReporterOptions = { outputFile: 'adcp-results.json', markdownFile: 'adcp.md' };",
      "export const jestReporter: AdcpJestReporterOptions = { outputFile: 'reports/adcp.json' };",
      "export const preset: JestPresetOptions = { adcp: { agentUrl: 'http://127.0.0.1:3000/mcp', timeoutMs: 10_000 } };",
      '',
      'export async function userTest(): Promise<void> {',
      "  const adcp = createAdcpClient({ url: 'http://127.0.0.1:3000/mcp', protocol: 'mcp', auth: 'token' });",
      "  const res = await adcp.call('list_creatives', {}, { auth: 'none' });",
      '  const status: number | undefined = res.status;',
      "  const loaded = loadStoryboardFile('flow.storyboard.yaml');",
      '  if (!loaded.ok) throw new Error(loaded.diagnostics[0]!.message);',
      '  const storyboard: Storyboard = loaded.storyboard;',
      "  const config: RuntimeConfig = { agentUrl: 'http://127.0.0.1:3000/mcp' };",
      '  const run = openStoryboardRun(storyboard, config, { shareSessions: true });',
      '  try {',
      '    const outcome: StepOutcome = await run.settle(storyboard.phases[0]!.id, storyboard.phases[0]!.steps[0]!.id);',
      '    const result: StepResult = outcome.result;',
      '    const meta: AdcpStepMeta | undefined = undefined;',
      '    void [status, result.passed, meta];',
      '  } finally {',
      '    await run.close();',
      '    await closeSharedSessions();',
      '    await adcp.close();',
      '  }',
      '}',
      '',
    ].join('\n');
    writeFileSync(join(user, 'uses.ts'), file);
    writeFileSync(
      join(user, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['uses.ts'],
      }),
    );
    const run = await runNode([tsc, '-p', 'tsconfig.json'], { cwd: user });
    expect((run.stdout + run.stderr).trim()).toBe('');
    expect(run.exitCode).toBe(0);
  }, 120_000);
});
