/**
 * The plugin the end-to-end configs add (vitest.e2e.config.ts and its siblings): a build of src, as an install has
 * it — Node loads it, and the workers leave its runtime to Node (src/plugin/projects.ts ownBuildDeps). The tests' child
 * runs get this test run's build (E2E_PLUGIN_BUILD: test/helpers/run-vitest.ts runNode sets it; a test that spawns a
 * child itself adds `await builtDist()`). A config run by hand names one: `npm run build`, then
 * `E2E_PLUGIN_BUILD=dist`. No fallback: a stale dist/ would be tested in place of src without a word.
 *
 * Not src/ itself: Vite would bundle it into every child's config and every worker would transform each module of the
 * runtime — about 2 s, 2.4 CPU-s and 200 MB more per child run, measured on one storyboard, with ~100 child runs in
 * `npm test`.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type Plugin = typeof import('../../src/index.js');

const build = process.env.E2E_PLUGIN_BUILD;
if (!build) throw new Error('E2E_PLUGIN_BUILD is not set: `npm run build`, then run with E2E_PLUGIN_BUILD=dist');
const entry = resolve(join(build, 'index.js'));
if (!existsSync(entry)) throw new Error(`E2E_PLUGIN_BUILD: no ${entry}; \`npm run build\` makes dist/`);
// A computed specifier: Vite's config bundler leaves it to Node.
const plugin = (await import(pathToFileURL(entry).href)) as Plugin;

export const { adcpStoryboards } = plugin;
