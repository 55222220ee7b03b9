import { UsageError } from './usage-error.js';

/**
 * Vitest's Node API, imported only when it is needed (a run, or arguments after `--`): `--list`, `--help`,
 * `--version` and `init` never load it. Vitest is an optional peer: without it, a usage error that says so.
 */
export async function importVitest(): Promise<typeof import('vitest/node')> {
  try {
    return await import('vitest/node');
  } catch (error) {
    if (
      (error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' ||
      !/'vitest'/.test(String((error as Error).message))
    )
      throw error;
    throw new UsageError(
      `Vitest is not installed where vitest-adcp is, and the storyboards run as Vitest tests: install it beside vitest-adcp (npm install -D vitest), or run npx vitest-adcp from a project that has it (${(error as Error).message.split('\n')[0]})`,
    );
  }
}
