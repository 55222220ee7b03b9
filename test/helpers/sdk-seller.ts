/**
 * The @adcp/sdk example seller the issue 33 cases start through `agent.start` / `--start`, from a repository with the
 * package installed (test/e2e/newcomer.test.ts, jest-client.test.ts).
 */
import { join } from 'node:path';
import { repoRoot } from './run-vitest.js';

/** The SDK's multi-tenant seller, relative to the repository it is installed in (PORT from the environment). */
export const SDK_SELLER = 'node_modules/@adcp/sdk/examples/hello_seller_adapter_multi_tenant.ts';

/**
 * The shell command that starts `entry` (the SDK seller, or a module of the repository importing it) with tsx;
 * listen-local.mjs binds it to 127.0.0.1. The shell records its pid in `pidFile`: the leader of the process group the
 * run must take down whole.
 */
export function sellerCommand(pidFile: string, entry = SDK_SELLER): string {
  const tsx = join(repoRoot, 'node_modules', '.bin', 'tsx');
  const preload = join(repoRoot, 'bench', 'compare', 'listen-local.mjs');
  return `echo $$ > '${pidFile}'; '${tsx}' --import '${preload}' ${entry}`;
}
