/**
 * docs/troubleshooting.md is checked against the code, so it cannot go stale:
 *
 * - every storyboard load rule (src/storyboard/rule-catalog.ts) has a section
 *   with its cause and fix, and every section names a rule that exists; every
 *   rule the loader reports is in the catalog;
 * - every configuration / usage error message written in the code — the
 *   literal of each `new …Error(…)`, `super(…)`, `config.error =` and warning
 *   of the plugin, the CLI (cli.ts, cli/), the run configuration, the corpus, webhooks and
 *   createAdcpClient, and each `jwksProblem(…)` / `const FIX =` of the operator's webhook signer JWKS — appears in the page: each literal fragment of it (the
 *   text between `${…}` interpolations) is quoted verbatim. Rewording a message
 *   or adding one without its entry fails here, with the text to add.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STORYBOARD_RULES } from '../src/storyboard/rule-catalog.js';

const repo = join(import.meta.dirname, '..');
const doc = readFileSync(join(repo, 'docs', 'troubleshooting.md'), 'utf8');

/** Where the configuration and usage messages are written. */
const MESSAGE_SOURCES = [
  'src/config.ts',
  'src/corpus.ts',
  'src/cli.ts',
  'src/open-run.ts',
  'src/webhooks/options.ts',
  'src/webhooks/operator-jwks.ts',
  'src/client/client.ts',
  'src/jest/start-agent.cts',
  ...filesUnder('src/agent'),
  ...filesUnder('src/corpus'),
  ...filesUnder('src/plugin'),
  ...filesUnder('src/cli'),
];

function filesUnder(dir: string): string[] {
  return readdirSync(join(repo, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The string literal (or `+`-joined literals) starting at `at`, as its literal fragments; undefined when the argument is not a literal. */
export function literalFragments(source: string, at: number): string[] | undefined {
  let i = at;
  const skipSpace = () => {
    while (/\s/.test(source[i] ?? '')) i++;
  };
  skipSpace();
  if (!/['"`]/.test(source[i] ?? '')) return undefined;
  const fragments: string[] = [];
  for (;;) {
    const quote = source[i]!;
    i++;
    let current = '';
    while (i < source.length && source[i] !== quote) {
      if (source[i] === '\\') {
        current += source[i + 1];
        i += 2;
      } else if (quote === '`' && source[i] === '$' && source[i + 1] === '{') {
        fragments.push(current);
        current = '';
        i = skipInterpolation(source, i + 2);
      } else current += source[i++];
    }
    fragments.push(current);
    i++;
    skipSpace();
    if (source[i] !== '+') break;
    i++;
    skipSpace();
    if (!/['"`]/.test(source[i] ?? '')) break;
  }
  return fragments;
}

/** Past the `}` closing an interpolation that starts at `i`, nested braces, strings and templates included. */
function skipInterpolation(source: string, i: number): number {
  let depth = 1;
  while (i < source.length && depth > 0) {
    const c = source[i]!;
    if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === "'" || c === '"' || c === '`') {
      i++;
      while (i < source.length && source[i] !== c) {
        if (source[i] === '\\') i++;
        else if (c === '`' && source[i] === '$' && source[i + 1] === '{') i = skipInterpolation(source, i + 2) - 1;
        i++;
      }
    }
    i++;
  }
  return i;
}

interface Message {
  where: string;
  fragments: string[];
}

/** Every message literal the code writes for a configuration or usage problem. */
function configurationMessages(): Message[] {
  const found: Message[] = [];
  const opener =
    /(?:new (?:\w*Error)\(|\bsuper\(|\bconfig\.error =|\bconfigurationError =|(?<![.\w])warn\(|\?\? defaultWarn\)\(|\bjwksProblem\(|\bconst FIX =)/g;
  for (const file of MESSAGE_SOURCES) {
    const source = readFileSync(join(repo, file), 'utf8');
    for (const match of source.matchAll(opener)) {
      const fragments = literalFragments(source, match.index + match[0].length);
      if (!fragments) continue;
      const line = source.slice(0, match.index).split('\n').length;
      found.push({ where: `${file}:${line}`, fragments: fragments.map((f) => f.trim()).filter((f) => f.length >= 12) });
    }
  }
  return found.filter((m) => m.fragments.length > 0);
}

/** `### \`rule\`` sections of the load-rule part of the page. */
function ruleSections(): Map<string, string> {
  const sections = new Map<string, string>();
  const parts = doc.split(/^### /m).slice(1);
  for (const part of parts) {
    const heading = /^`([a-z_]+)`/.exec(part);
    if (heading) sections.set(heading[1]!, part);
  }
  return sections;
}

describe('docs/troubleshooting.md', () => {
  it('has a section with cause and fix for every storyboard load rule, and none for a rule that does not exist', () => {
    const sections = ruleSections();
    const rules = Object.keys(STORYBOARD_RULES);
    expect(
      rules.filter((rule) => !sections.has(rule)),
      'rules without a section',
    ).toEqual([]);
    expect(
      [...sections.keys()].filter((rule) => !rules.includes(rule)),
      'sections of no rule',
    ).toEqual([]);
    for (const [rule, text] of sections) {
      expect(text, `${rule}: a Cause`).toMatch(/\*\*Cause\.\*\*/);
      expect(text, `${rule}: a Fix`).toMatch(/\*\*Fix\.\*\*/);
    }
  });

  it('every rule the loader reports is in the rule catalog', () => {
    const used = new Set<string>();
    for (const file of filesUnder('src/storyboard')) {
      const source = readFileSync(join(repo, file), 'utf8');
      for (const m of source.matchAll(
        /sink\.(?:error|warning)\(\s*'([a-z_]+)'|sink\.add\(\s*'(?:error|warning)',\s*'([a-z_]+)'/g,
      ))
        used.add(m[1] ?? m[2]!);
    }
    expect(used.size).toBeGreaterThan(20);
    expect([...used].filter((rule) => !Object.hasOwn(STORYBOARD_RULES, rule))).toEqual([]);
  });

  it('quotes every configuration and usage message the code writes', () => {
    const messages = configurationMessages();
    // The sources above write at least this many (a scanner that finds nothing proves nothing).
    expect(messages.length).toBeGreaterThan(35);
    const missing = messages.flatMap((m) =>
      m.fragments.filter((f) => !doc.includes(f)).map((f) => `${m.where}: ${JSON.stringify(f)}`),
    );
    expect(
      missing,
      'add each to docs/troubleshooting.md (quoted as the code writes it, with <placeholders> for the ${…} parts)',
    ).toEqual([]);
  });

  it('reads message literals as the code writes them (the scanner itself)', () => {
    const source = 'throw new UsageError(`a ${x ? `nested ${y}` : \'}\'} b: \\`c\\`` + "d");';
    expect(literalFragments(source, source.indexOf('(') + 1)).toEqual(['a ', ' b: `c`', 'd']);
    expect(literalFragments('f(error.message)', 2)).toBeUndefined();
    expect(relative(repo, join(repo, MESSAGE_SOURCES[0]!))).toBe('src/config.ts');
  });
});
