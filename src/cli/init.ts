/**
 * `npx vitest-adcp init [file]`: the starter storyboard (this package's examples/discovery.storyboard.yaml) written
 * into the user's repository, never over an existing file, and what to run next.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { UsageError } from './usage-error.js';

/** The starter storyboard `init` copies: in this package, beside dist/ (and src/, when run from source). */
const STARTER = fileURLToPath(new URL('../../examples/discovery.storyboard.yaml', import.meta.url));
const DEFAULT_INIT_FILE = 'agent.storyboard.yaml';

export function parseInit(
  args: string[],
  forVitest: string[],
  cwd: string,
): { kind: 'help' } | { kind: 'init'; file: string } {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: { help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    throw new UsageError(`init: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (parsed.values.help) return { kind: 'help' };
  if (parsed.positionals.length > 1 || forVitest.length > 0)
    throw new UsageError(
      `init takes one file name at most, got: ${[...parsed.positionals, ...forVitest].join(' ')} (e.g. npx vitest-adcp init ./agent.storyboard.yaml)`,
    );
  const given = parsed.positionals[0] ?? DEFAULT_INIT_FILE;
  if (!/\.storyboard\.ya?ml$/.test(given))
    throw new UsageError(
      `init ${given}: name it *.storyboard.yaml, e.g. ${given.replace(/(\.ya?ml)?$/, '')}.storyboard.yaml, so the plugin's default include runs it`,
    );
  return { kind: 'init', file: resolve(cwd, given) };
}

/** `init`: the starter storyboard written to `file` (never over an existing one), and what to run next. */
export function init(file: string, cwd: string): number {
  let text: string;
  try {
    text = readFileSync(STARTER, 'utf8');
  } catch {
    throw new UsageError(
      `init: this install of vitest-adcp has no starter storyboard (${STARTER}); reinstall it (npm install -D vitest-adcp)`,
    );
  }
  const shown = relative(cwd, file) || file;
  const path = shown.startsWith('.') || shown.startsWith('/') ? shown : `./${shown}`;
  let made = false;
  try {
    mkdirSync(dirname(file), { recursive: true });
    made = true;
    writeFileSync(file, text, { flag: 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && made)
      throw new UsageError(
        `init: ${path} exists already; it is left as it is: give another file name (npx vitest-adcp init ./other.storyboard.yaml), or remove it first`,
      );
    throw new UsageError(
      `init: cannot write ${path} (${code ?? (error instanceof Error ? error.message : String(error))})`,
    );
  }
  console.log(`vitest-adcp: wrote ${path}, a starter storyboard (a read-only discovery flow: edit its steps for your agent).

Run it against your agent:

  npx vitest-adcp <agent-url> --storyboards ${path}

or, with the plugin in vitest.config.ts, where every *.storyboard.yaml runs beside your tests:

  import { defineConfig } from 'vitest/config';
  import { adcpStoryboards } from 'vitest-adcp';
  export default defineConfig({ plugins: [adcpStoryboards()] });

  ADCP_AGENT_URL=<agent-url> npx vitest run`);
  return 0;
}
