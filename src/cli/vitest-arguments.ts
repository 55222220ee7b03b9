import { importVitest } from './import-vitest.js';
import { UsageError } from './usage-error.js';

/** What goes to Vitest: the arguments after `--`, as its options and its file filters. */
export interface VitestArguments {
  options: Record<string, unknown>;
  filters: string[];
}

/** Vitest options that make no sense for a one-off run without a config: refused, with what to do instead. */
const NOT_FOR_THIS_COMMAND: Record<string, string> = {
  watch: '--watch',
  w: '--watch',
  config: '--config',
  c: '--config',
  root: '--root',
  r: '--root',
  dir: '--dir',
  ui: '--ui',
  standalone: '--standalone',
};

/**
 * The arguments after `--`, read by Vitest's own parser (`parseCLI`, what `vitest run <args>` reads them with): its
 * options, and its file filters.
 */
export async function vitestArguments(args: string[]): Promise<VitestArguments> {
  if (args.length === 0) return { options: {}, filters: [] };
  const { parseCLI } = await importVitest();
  let parsed: ReturnType<typeof parseCLI>;
  try {
    parsed = parseCLI(['vitest', 'run', ...args]);
  } catch (error) {
    throw new UsageError(
      `after --: ${error instanceof Error ? error.message : String(error)} (the arguments after -- are Vitest's, as for \`vitest run\`)`,
    );
  }
  const options: Record<string, unknown> = { ...parsed.options };
  // Not options: the parser's own bookkeeping, and its defaults for what was not given.
  delete options['--'];
  delete options.run;
  if (options.color === true) delete options.color;
  for (const key of Object.keys(options)) {
    const flag = NOT_FOR_THIS_COMMAND[key];
    if (flag)
      throw new UsageError(
        `-- ${flag}: this command runs the storyboards once, from the current directory, without a Vitest config, so ${flag} does not apply. For it, add the plugin to your vitest.config.ts (README, "Quick start") and run Vitest itself`,
      );
  }
  return { options, filters: parsed.filter };
}
