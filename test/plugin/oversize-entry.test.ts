/**
 * A storyboard over the byte bound as a test file while Vitest's module cache is on (src/plugin/oversize-entry.ts):
 * its entry resolves to an id that names no file, whose module is the load failure, read from nothing but the file's
 * size. The run that measures what this saves: test/e2e/hostile-yaml.test.ts; the watch-mode edits:
 * test/e2e/watch.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adcpStoryboards } from '../../src/index.js';
import { moduleCacheKey } from '../../src/plugin/module-cache.js';
import { loadOversizeEntry, oversizeEntryFile, oversizeEntryId } from '../../src/plugin/oversize-entry.js';
import { createState, isStoryboard, OVERSIZE_ENTRY, type PluginState } from '../../src/plugin/state.js';
import { testGlobMatcher } from '../../src/plugin/storyboard-modules.js';

const scratch = mkdtempSync(join(tmpdir(), 'adcp-oversize-entry-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const small = join(scratch, 'small.storyboard.yaml');
const big = join(scratch, 'big.storyboard.yaml');
writeFileSync(small, 'id: small\n');
writeFileSync(big, `id: big\n# ${'x'.repeat(200)}\n`);
const bounds = { maxBytes: 100 };

function stateWith(moduleCacheOn = true): PluginState {
  const state = createState({ storyboardBounds: bounds });
  state.moduleCacheOn = moduleCacheOn;
  return state;
}

describe('the entry of a test file', () => {
  it('is the oversize id for a storyboard over the byte bound while the module cache is on', () => {
    expect(oversizeEntryId(stateWith(), big)).toBe(`${OVERSIZE_ENTRY}${big}`);
    expect(oversizeEntryFile(`${OVERSIZE_ENTRY}${big}`)).toBe(big);
  });

  it('resolves as usual otherwise: within the bound, the cache off, not a storyboard, no such file', () => {
    expect(oversizeEntryId(stateWith(), small)).toBeUndefined();
    expect(oversizeEntryId(stateWith(false), big)).toBeUndefined();
    const notStoryboard = join(scratch, 'big.test.ts');
    writeFileSync(notStoryboard, 'x'.repeat(200));
    expect(oversizeEntryId(stateWith(), notStoryboard)).toBeUndefined();
    const otherYaml = join(scratch, 'big.yaml');
    writeFileSync(otherYaml, `a: ${'x'.repeat(200)}\n`);
    expect(oversizeEntryId(stateWith(), otherYaml)).toBeUndefined();
    expect(oversizeEntryId(stateWith(), join(scratch, 'gone.storyboard.yaml'))).toBeUndefined();
    expect(oversizeEntryFile(big)).toBeUndefined();
  });

  it('is no storyboard to the transform and never kept by the module cache', () => {
    const id = `${OVERSIZE_ENTRY}${big}`;
    expect(isStoryboard(stateWith(), big)).toBe(true);
    expect(isStoryboard(stateWith(), id)).toBe(false);
    expect(moduleCacheKey(stateWith(), id, 'import "x";')).toBe(false);
  });
});

describe('the load of an oversize entry', () => {
  it('is the load failure naming the bound, mapped onto the file by its absolute path, the file watched', () => {
    const watched: string[] = [];
    const module = loadOversizeEntry({ addWatchFile: (f) => watched.push(f) }, stateWith(), big);
    expect(module.code).toContain('loadFailureSuite');
    expect(module.code).toContain('"rule":"storyboard_bound"');
    expect(module.code).toContain(`the storyboard file is 211 bytes, over the bound maxBytes = 100 bytes`);
    expect(module.map?.sources).toEqual([big]);
    expect(watched).toEqual([big]);
  });

  it('imports the file itself once it is within the bound', () => {
    const watched: string[] = [];
    const module = loadOversizeEntry({ addWatchFile: (f) => watched.push(f) }, stateWith(), small);
    expect(module).toEqual({ code: `import ${JSON.stringify(small)};\n`, map: null });
    expect(watched).toEqual([small]);
  });
});

describe("the plugin's hooks", () => {
  const hooks = () => {
    const plugin = adcpStoryboards({ storyboardBounds: bounds }) as unknown as {
      resolveId: (this: unknown, source: string, importer?: string, options?: object) => Promise<string | null>;
      load: (this: unknown, id: string) => { code: string } | null;
    };
    return plugin;
  };

  it('leave the import of its file by an oversize entry to Vite (its test module, not its data)', async () => {
    const plugin = hooks();
    const context = { resolve: async (source: string) => ({ id: source, external: false }) };
    expect(await plugin.resolveId.call(context, small, `${OVERSIZE_ENTRY}${small}`, {})).toBeNull();
    // What any other module's import of a storyboard gets: its data.
    expect(await plugin.resolveId.call(context, small, join(scratch, 'a.test.ts'), {})).toMatch(
      /\?adcp-storyboard-data$/,
    );
  });

  it("answer a storyboard module's import of the runtime themselves, its own path; the same path imported elsewhere is Vite's", async () => {
    const plugin = hooks();
    // The runtime the compiled modules import (compile.ts): this package's own file, here from source.
    const runtime = createState({}).runtime;
    expect(runtime).toMatch(/\/src\/runtime\.ts$/);
    const asked: string[] = [];
    const context = { resolve: async (source: string) => (asked.push(source), { id: source, external: false }) };
    expect(await plugin.resolveId.call(context, runtime, small, {})).toBe(runtime);
    expect(asked).toEqual([]);
    expect(await plugin.resolveId.call(context, runtime, join(scratch, 'a.test.ts'), {})).toBeNull();
    expect(await plugin.resolveId.call(context, `${runtime}x`, small, {})).toBeNull();
  });

  it('load an oversize entry as its load failure', () => {
    const module = hooks().load.call({ addWatchFile: () => undefined }, `${OVERSIZE_ENTRY}${big}`);
    expect(module?.code).toContain('over the bound maxBytes = 100 bytes');
  });
});

describe("the project's test-glob answers (isStoryboard's last resort)", () => {
  it('asks Vitest once per file, and gives its answer every time after', () => {
    const asked: string[] = [];
    const matches = testGlobMatcher({ matchesTestGlob: (id: string) => (asked.push(id), id.endsWith('a.yaml')) });
    expect([matches('/x/a.yaml'), matches('/x/b.yaml'), matches('/x/a.yaml'), matches('/x/b.yaml')]).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect(asked).toEqual(['/x/a.yaml', '/x/b.yaml']);
  });
});
