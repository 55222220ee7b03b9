#!/usr/bin/env node
/**
 * Re-makes the README's HTML report screenshot (docs/img/html-report.png) and
 * prints the markdown summary of the same run (the README's sample):
 * the demo storyboards (vitest.demo.config.ts) against the fixture agent's
 * `wrong_value` endpoint — which alters every echoed context value, so some
 * steps fail — with the contract reporter writing the JSON, the HTML and the
 * markdown; then headless Chromium (Debian's `chromium` package) photographs
 * the HTML report.
 *
 *   node scripts/html-report-screenshot.mjs [--out docs/img/html-report.png] [--chromium /usr/bin/chromium]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startFixtureAgent } from '../fixtures/agent/server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'docs/img/html-report.png' },
    chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' },
  },
});
const out = resolve(root, values.out);
const work = join(root, '.vitest-adcp', 'screenshot');
if (!existsSync(values.chromium)) {
  console.error(`no Chromium at ${values.chromium}: apt-get install -y chromium (or --chromium <path>)`);
  process.exit(2);
}

function run(command, args, env = {}) {
  return new Promise((resolveRun) => {
    const child = spawn(command, args, {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, ...env },
    });
    child.on('close', (code) => resolveRun(code ?? 1));
  });
}

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const agent = await startFixtureAgent();
let code;
try {
  code = await run(
    process.execPath,
    [
      join(root, 'node_modules', 'vitest', 'vitest.mjs'),
      'run',
      '--config',
      'vitest.demo.config.ts',
      '--reporter=dot',
      '--reporter=./src/vitest/reporter.ts',
      `--outputFile.vitest-adcp=${join(work, 'results.json')}`,
      `--outputFile.vitest-adcp-html=${join(work, 'report.html')}`,
      `--outputFile.vitest-adcp-markdown=${join(work, 'summary.md')}`,
    ],
    // A job summary is for CI runs, not for this one.
    { ADCP_AGENT_URL: `${new URL(agent.url).origin}/x/wrong_value/mcp`, GITHUB_STEP_SUMMARY: '' },
  );
} finally {
  await agent.close();
}
if (!existsSync(join(work, 'report.html'))) {
  console.error(`the run wrote no HTML report (vitest exited ${code})`);
  process.exit(1);
}
mkdirSync(dirname(out), { recursive: true });
// --no-sandbox: Chromium refuses to start its sandbox as root (containers, CI). The page loads nothing from the network.
const shot = await run(values.chromium, [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--hide-scrollbars',
  `--screenshot=${out}`,
  '--window-size=1280,900',
  pathToFileURL(join(work, 'report.html')).href,
]);
if (shot !== 0 || !existsSync(out)) {
  console.error(`chromium exited ${shot} without a screenshot`);
  process.exit(1);
}
console.log(`\nscreenshot: ${out}\nHTML report: ${join(work, 'report.html')}\n\nmarkdown summary of the same run:\n`);
console.log(readFileSync(join(work, 'summary.md'), 'utf8'));
