/**
 * The layers of src/, lowest first. A module may import from its own folder and from folders of a lower layer only:
 * never upward, never sideways into another folder of its own layer. `lint/layer-rule.mjs` enforces it in ESLint, and
 * test/docs/architecture.test.ts checks that every folder of src/ is here and has its row in docs/architecture.md.
 * A top-level module (`src/cli.ts`) is the unit of its name; `src/cli.ts` and `src/cli/` are one unit.
 */
export const LAYERS = [
  ['model', 'cache'],
  ['corpus'],
  ['transport'],
  ['signing', 'schemas', 'agent'],
  ['checks', 'webhooks'],
  ['config', 'storyboard'],
  ['plan'],
  ['engine'],
  ['roles'],
  ['report', 'compile', 'client'],
  ['adapter'],
  ['matchers', 'open-run'],
  ['vitest', 'jest'],
  ['plugin', 'runtime'],
  ['cli'],
  ['index', 'internal'],
];

/** unit name → its layer's index. */
export const LAYER_OF = new Map(LAYERS.flatMap((units, rank) => units.map((unit) => [unit, rank])));

/** The unit a path inside src/ belongs to (`engine/run.ts` → `engine`, `cli.ts` → `cli`), or undefined outside src/. */
export function unitOf(pathInSrc) {
  const [first] = pathInSrc.split('/');
  return first.replace(/\.(c|m)?(ts|js)$/, '');
}
