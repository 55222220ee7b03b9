/**
 * ESLint rule `layers/downward-only`: an import from another folder of src/ must go to a lower layer
 * (lint/layers.mjs), and into roles/ only through its registry, `roles/index.ts`: a role is one folder, and what the
 * rest of the code needs of one (its plan, its compile-time data) the registry hands out. Relative specifiers only — src/ imports its own modules relatively — resolved by path, so the rule
 * needs no module resolver and sees type-only imports too (a type cycle is still a cycle in the design).
 */
import path from 'node:path';
import { LAYER_OF, LAYERS, unitOf } from './layers.mjs';

const layerNames = (rank) => LAYERS[rank].join(', ');

/** src/roles/index.ts, however the specifier names it (`../roles/index.js`, `../roles`, `../roles/index`). */
function isRoleRegistry(target, src) {
  const inSrc = target.slice(src.length).split(path.sep).join('/');
  return /^roles(\/index(\.(c|m)?(ts|js))?)?$/.test(inSrc);
}

export const downwardOnly = {
  meta: {
    type: 'problem',
    docs: { description: 'imports between folders of src/ go to a lower layer only (docs/architecture.md)' },
    schema: [],
  },
  create(context) {
    const src = path.join(context.cwd, 'src') + path.sep;
    const file = context.filename;
    if (!file.startsWith(src)) return {};
    const fromUnit = unitOf(file.slice(src.length).split(path.sep).join('/'));
    const fromRank = LAYER_OF.get(fromUnit);
    const check = (node, specifier) => {
      if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
      const target = path.resolve(path.dirname(file), specifier);
      if (!target.startsWith(src)) return;
      const toUnit = unitOf(target.slice(src.length).split(path.sep).join('/'));
      if (toUnit === fromUnit) return;
      if (fromRank === undefined) {
        context.report({
          node,
          message: `src/${fromUnit} has no layer: add it to lint/layers.mjs and a row to docs/architecture.md`,
        });
        return;
      }
      const toRank = LAYER_OF.get(toUnit);
      if (toUnit === 'roles' && toRank < fromRank && !isRoleRegistry(target, src)) {
        context.report({
          node,
          message: `${fromUnit} may not import a role's own module (${path.relative(src, target)}): import it from roles/index.ts, the role registry, which exports what other layers need of a role`,
        });
        return;
      }
      if (toRank === undefined || toRank >= fromRank)
        context.report({
          node,
          message:
            toRank === undefined
              ? `src/${toUnit} has no layer: add it to lint/layers.mjs and a row to docs/architecture.md`
              : `${fromUnit} (layer ${fromRank}: ${layerNames(fromRank)}) may not import ${toUnit} (layer ${toRank}: ${layerNames(toRank)}): ` +
                `imports go to lower layers only. Move what both need down (often into model/), or pass it in.`,
        });
    };
    return {
      ImportDeclaration: (node) => check(node.source, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node.source, node.source.value),
      ExportAllDeclaration: (node) => check(node.source, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node.source, node.source.value),
      CallExpression: (node) => {
        const [arg] = node.arguments;
        if (node.callee.type === 'Identifier' && node.callee.name === 'require' && arg?.type === 'Literal')
          check(arg, arg.value);
      },
    };
  },
};
