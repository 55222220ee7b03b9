/**
 * The plugin's own build is a module source Vitest leaves to Node (src/plugin/projects.ts ownBuildDeps): compiled
 * storyboards import the runtime by absolute path, and outside node_modules (a link, a workspace, a clone) Vitest would
 * transform every module of the build instead. From source (`.ts`) nothing is added: Node could not load it.
 */
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ownBuildDeps } from '../../src/plugin/projects.js';

const external = (moduleFile: string) => ownBuildDeps(pathToFileURL(moduleFile).href)?.deps.external ?? [];
const matches = (moduleFile: string, id: string) => external(moduleFile).some((pattern) => pattern.test(id));

describe("the plugin's own build, left to Node", () => {
  it('matches every module of the build the plugin runs from, the runtime first', () => {
    const plugin = '/home/me/vitest-adcp/dist/plugin/projects.js';
    expect(matches(plugin, '/home/me/vitest-adcp/dist/runtime.js')).toBe(true);
    expect(matches(plugin, '/home/me/vitest-adcp/dist/engine/storyboard-run.js')).toBe(true);
  });

  it('matches nothing beside it: not the package root, not a sibling folder, not a user file', () => {
    const plugin = '/home/me/vitest-adcp/dist/plugin/projects.js';
    expect(matches(plugin, '/home/me/vitest-adcp/src/runtime.ts')).toBe(false);
    expect(matches(plugin, '/home/me/vitest-adcp/dist-old/runtime.js')).toBe(false);
    expect(matches(plugin, '/home/me/app/home/me/vitest-adcp/dist/runtime.js')).toBe(false);
    expect(matches(plugin, '/home/me/app/storyboards/a.storyboard.yaml')).toBe(false);
  });

  it("reads the build's path literally, characters a pattern would read otherwise included", () => {
    const plugin = '/tmp/a+b (1)/[x]/dist/plugin/projects.js';
    expect(matches(plugin, '/tmp/a+b (1)/[x]/dist/runtime.js')).toBe(true);
    expect(matches(plugin, '/tmp/aab (1)/x/dist/runtime.js')).toBe(false);
  });

  it('adds nothing when the plugin runs from source, which Vite must transform', () => {
    expect(ownBuildDeps(pathToFileURL('/home/me/vitest-adcp/src/plugin/projects.ts').href)).toBeUndefined();
    // This test imports the plugin from src/: the default is the running module's own path.
    expect(ownBuildDeps()).toBeUndefined();
  });
});
