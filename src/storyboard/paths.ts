/** Data paths as authors read them: `phases[0].steps[2].validations[1]`. */
import type { DataPath } from './source-map.js';

import { isPlainObject } from '../model/path.js';

export { isPlainObject };

export function formatPath(path: DataPath): string {
  if (path.length === 0) return 'storyboard';
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** JSON Pointer (`/phases/0/steps`) → data path. Digits are array indexes. */
export function parsePointer(pointer: string): DataPath {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s));
}

/**
 * Names the object a key belongs to the way an author finds it:
 * `step "probe"`, `validations[2] of step "probe"`, `auth of step "probe"`,
 * `phase "setup"`, `prerequisites`.
 */
export function describeOwner(root: unknown, path: DataPath): string {
  // The nearest storyboard / phase / step that encloses `path`.
  let ownerEnd = 0;
  let kind = 'storyboard';
  if (path[0] === 'phases' && typeof path[1] === 'number') {
    [ownerEnd, kind] = [2, 'phase'];
    if (path[2] === 'steps' && typeof path[3] === 'number') [ownerEnd, kind] = [4, 'step'];
  }
  const owner = getAt(root, path.slice(0, ownerEnd));
  const id = isPlainObject(owner) && typeof owner.id === 'string' ? ` "${owner.id}"` : '';
  const rest = path.slice(ownerEnd);
  const label = `${kind}${id}`;
  if (rest.length === 0) return label;
  const inner = formatPath(rest);
  return ownerEnd === 0 ? inner : `${inner} of ${label}`;
}

function getAt(root: unknown, path: DataPath): unknown {
  let value = root;
  for (const segment of path) value = (value as Record<string | number, unknown> | undefined)?.[segment];
  return value;
}
