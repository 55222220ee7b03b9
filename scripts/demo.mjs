#!/usr/bin/env node
/**
 * npm run demo: start the bundled fixture agent on 127.0.0.1 (ephemeral port),
 * run the bundled storyboards against it with plain `vitest run`, stop the
 * agent, exit with vitest's code. Extra arguments go to vitest
 * (e.g. `npm run demo -- -t get_capabilities`).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { startFixtureAgent } from '../fixtures/agent/server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const agent = await startFixtureAgent();
console.log(`fixture agent listening at ${agent.url}\n`);

const child = spawn(
  process.execPath,
  [
    join(root, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    '--config',
    'vitest.demo.config.ts',
    ...process.argv.slice(2),
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ADCP_AGENT_URL: agent.url },
  },
);
const code = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
await agent.close();
// The contract reporter says where it wrote the report.
process.exit(code);
