/**
 * Parse a YAML file into plain data plus a way to point back at where each
 * value was written. Every diagnostic and every `loc` of the loader goes
 * through `SourceMap`, so positions are computed one way everywhere.
 */
import type { Document, LineCounter, Node as YamlNode, Pair, YAMLError } from 'yaml';
import { yaml } from './yaml-lib.js';
import type { SourceLocation } from '../model/storyboard.js';

/** A path into the parsed data: object keys and array indexes. */
export type DataPath = ReadonlyArray<string | number>;

export interface ParsedYaml {
  /** Plain JSON data (`undefined` when the file holds no document). */
  data: unknown;
  map: SourceMap;
  errors: YamlProblem[];
  warnings: YamlProblem[];
  /** Where the first alias (`*name`) is written (the file's start when there is none). */
  firstAlias: () => SourceLocation;
}

interface YamlProblem {
  /** The yaml package's error code, e.g. `DUPLICATE_KEY`. */
  code: string;
  message: string;
  loc: SourceLocation;
}

const START: SourceLocation = { line: 1, column: 1 };

/** Expanded aliases allowed per document (the `yaml` package's own default). */
export const MAX_ALIAS_COUNT = 100;

/** Where the first alias (`*name`) is written: what an alias-limit error points at. */
function firstAliasLocation(doc: Document.Parsed, map: SourceMap): SourceLocation {
  let at: number | undefined;
  yaml().visit(doc, {
    Alias(_key, node) {
      at = node.range?.[0];
      return yaml().visit.BREAK;
    },
  });
  return at === undefined ? START : map.offsetToLocation(at);
}

export function parseYaml(source: string): ParsedYaml {
  const lineCounter = new (yaml().LineCounter)();
  const doc = yaml().parseDocument(source, {
    lineCounter,
    prettyErrors: false,
    // `<<: *anchor` is a common authoring idiom; resolving it keeps the
    // storyboard's data what the author sees in an editor.
    merge: true,
    uniqueKeys: true,
  });
  const map = new SourceMap(doc, lineCounter, source);
  // A problem the parser finds at the end of the input (an unclosed quote or bracket) is placed on the file's last
  // character: a position past the last line is one no editor can show, and the failing test must sit where it says.
  const lastContent = source.trimEnd().length - 1;
  const toProblem = (e: YAMLError): YamlProblem => ({
    code: e.code,
    message: firstLine(e.message),
    loc: map.offsetToLocation(Math.max(0, Math.min(e.pos[0], lastContent))),
  });
  const errors = doc.errors.map(toProblem);
  const warnings = doc.warnings.map(toProblem);
  let data: unknown;
  if (errors.length === 0) {
    try {
      // The yaml package's default cap: a few aliases of a big list are enough to exhaust memory (an alias bomb).
      data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      errors.push({
        code: 'ALIAS_LIMIT',
        message: error instanceof Error ? firstLine(error.message) : String(error),
        loc: firstAliasLocation(doc, map),
      });
    }
  }
  return {
    data: data === null ? undefined : data,
    map,
    errors,
    warnings,
    firstAlias: () => firstAliasLocation(doc, map),
  };
}

/** `key:` with nothing after it: point at the key, not at the end of the line. */
function isEmptyScalar(node: unknown): boolean {
  return yaml().isScalar(node) && node.value === null && (!node.range || node.range[0] === node.range[1]);
}

function firstLine(message: string): string {
  // The yaml package appends " at line X, column Y" (positions are reported
  // separately, in the `file:line:col` prefix) and sometimes a code excerpt.
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
}

/** Maps data paths back to 1-based line/column positions in the YAML text. */
export class SourceMap {
  constructor(
    private readonly doc: Document.Parsed,
    private readonly lines: LineCounter,
    /** The YAML text (for positions inside a scalar); absent, those fall back to the scalar's start. */
    private readonly source?: string,
  ) {}

  /**
   * Where `token` is written inside the string at `path` (its `occurrence`-th appearance, 0-based): a placeholder or
   * a path inside a longer value, located at itself. Searched in the scalar's source text, so an escape or a line fold
   * before the token cannot shift it; when the token is not written verbatim there (an escaped character inside it),
   * the value's start.
   */
  locationInValue(path: DataPath, token: string, occurrence = 0): SourceLocation {
    const { node, depth } = this.resolve(path);
    const range = depth === path.length && yaml().isScalar(node) ? node.range : undefined;
    if (range && this.source !== undefined) {
      const text = this.source.slice(range[0], range[1]);
      let at = -1;
      for (let i = 0; i <= occurrence; i++) {
        at = text.indexOf(token, at + 1);
        if (at < 0) break;
      }
      if (at >= 0) return this.offsetToLocation(range[0] + at);
    }
    return this.valueLocation(path);
  }

  offsetToLocation(offset: number): SourceLocation {
    const { line, col } = this.lines.linePos(offset);
    return { line, column: col };
  }

  /**
   * Where the value at `path` starts. For a mapping that is its first key
   * (so a step written `- id: x` is located at `id`); for a key whose value is
   * empty it is the key. Falls back to the nearest existing ancestor.
   */
  valueLocation(path: DataPath): SourceLocation {
    const { node, pair, depth } = this.resolve(path);
    if (depth === path.length) {
      const at = (isEmptyScalar(node) ? undefined : this.nodeStart(node)) ?? this.nodeStart(pair?.key);
      if (at !== undefined) return this.offsetToLocation(at);
    }
    return this.ancestorLocation(node, pair);
  }

  /**
   * Where the key of the last path segment is written (for diagnostics about
   * a key, such as a misspelled one). Array items have no key: their value
   * position is used.
   */
  keyLocation(path: DataPath): SourceLocation {
    const { node, pair, depth } = this.resolve(path);
    if (depth === path.length && pair) {
      const at = this.nodeStart(pair.key);
      if (at !== undefined) return this.offsetToLocation(at);
    }
    if (depth === path.length) return this.valueLocation(path);
    return this.ancestorLocation(node, pair);
  }

  private ancestorLocation(node: unknown, pair: Pair | undefined): SourceLocation {
    const at = this.nodeStart(node) ?? this.nodeStart(pair?.key);
    return at === undefined ? START : this.offsetToLocation(at);
  }

  /** Walk `path` as far as it exists; `depth` says how many segments matched. */
  private resolve(path: DataPath): { node: unknown; pair: Pair | undefined; depth: number } {
    let node: unknown = this.deref(this.doc.contents);
    let pair: Pair | undefined;
    let depth = 0;
    for (const segment of path) {
      const next = this.child(node, segment);
      if (!next) break;
      node = this.deref(next.node);
      pair = next.pair;
      depth++;
    }
    return { node, pair, depth };
  }

  private child(node: unknown, segment: string | number): { node: unknown; pair?: Pair } | undefined {
    if (yaml().isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment];
      return item === undefined ? undefined : { node: item };
    }
    if (yaml().isMap(node)) {
      const pair = this.findPair(node.items as Pair[], String(segment));
      return pair ? { node: pair.value, pair } : undefined;
    }
    return undefined;
  }

  /** Finds a key in a mapping, looking through `<<` merge sources last. */
  private findPair(items: Pair[], key: string): Pair | undefined {
    const direct = items.find((p) => yaml().isScalar(p.key) && String(p.key.value) === key);
    if (direct) return direct;
    for (const p of items) {
      if (!yaml().isScalar(p.key) || p.key.value !== '<<') continue;
      const sources = yaml().isSeq(p.value) ? p.value.items : [p.value];
      for (const source of sources) {
        const target = this.deref(source);
        if (yaml().isMap(target)) {
          const found = this.findPair(target.items as Pair[], key);
          if (found) return found;
        }
      }
    }
    return undefined;
  }

  private deref(node: unknown): unknown {
    let current = node;
    for (let hops = 0; yaml().isAlias(current) && hops < 100; hops++) current = current.resolve(this.doc);
    return current;
  }

  /** Start offset of a node; a flow mapping `{ a: 1 }` starts at its first key. */
  private nodeStart(node: unknown): number | undefined {
    if (yaml().isPair(node)) return this.nodeStart(node.key);
    if (yaml().isMap(node)) {
      const first = node.items[0] as Pair | undefined;
      const keyStart = first ? this.nodeStart(first.key) : undefined;
      if (keyStart !== undefined) return keyStart;
    }
    const range = (node as YamlNode | null | undefined)?.range;
    return range ? range[0] : undefined;
  }
}
