/**
 * The plugin the end-to-end configs add (vitest.e2e.config.ts and its siblings): a build of src, as an install has
 * it — Node loads it, and the workers leave its runtime to Node (src/plugin/projects.ts ownBuildDeps). The tests'
 * child runs get this test run's build (E2E_PLUGIN_BUILD, test/helpers/run-vitest.ts runNode); a config run by hand
 * gets the repo's dist/ (`npm run build`). Not src/: Vite would bundle it into every child's config and every worker
 * would transform each module of the runtime — about 2 s, 2.4 CPU-s and 200 MB more per child run, measured on one
 * storyboard, with ~100 child runs in `npm test`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

type Plugin = typeof import('../../src/index.js');

const build = process.env.E2E_PLUGIN_BUILD ?? fileURLToPath(new URL('../../dist', import.meta.url));
const entry = join(build, 'index.js');
if (!existsSync(entry))
  throw new Error(`no build of vitest-adcp at ${build}: run \`npm run build\`, or set E2E_PLUGIN_BUILD`);
// A computed specifier: Vite's config bundler leaves it to Node.
const plugin = (await import(pathToFileURL(entry).href)) as Plugin;

export const { adcpStoryboards } = plugin;
