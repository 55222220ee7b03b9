/**
 * The part of an agent's answer that explains a failure: the branch down to
 * the failing JSON Pointer kept whole at its end, everything beside it
 * summarised. A failing `products[3].name` shows the product, not 56 lines of
 * catalogue; the full answer stays in the record and the report.
 */
import { setOwn } from '../model/path.js';

/** Object keys shown beside the path at each level (scalars only: ids and names give context). */
const SIBLING_SCALARS = 3;
/** Keys listed when the path stops at an object that lacks the next one. */
const LISTED_KEYS = 12;

/**
 * `value` reduced to the path of `pointer` (RFC 6901). Where the path ends the
 * value is kept whole (the renderer truncates it); where it breaks off, the
 * object's own keys are listed so the reader sees what was there instead.
 */
export function excerptAround(value: unknown, pointer: string): unknown {
  if (pointer === '' || !pointer.startsWith('/')) return value;
  const tokens = pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  return excerpt(value, tokens, 0);
}

function excerpt(node: unknown, tokens: string[], i: number): unknown {
  if (i === tokens.length) return node;
  const token = tokens[i]!;
  if (Array.isArray(node)) {
    const index = /^\d+$/.test(token) ? Number(token) : -1;
    if (index < 0 || index >= node.length)
      return [`… ${node.length} item${node.length === 1 ? '' : 's'}, none at index ${token}`];
    const out: unknown[] = [];
    if (index > 0) out.push(`… ${index} item${index === 1 ? '' : 's'} before`);
    out.push(excerpt(node[index], tokens, i + 1));
    const after = node.length - index - 1;
    if (after > 0) out.push(`… ${after} item${after === 1 ? '' : 's'} after`);
    return out;
  }
  if (node === null || typeof node !== 'object') return node;
  const record = node as Record<string, unknown>;
  const keys = Object.keys(record);
  if (!Object.prototype.hasOwnProperty.call(record, token)) {
    return shallow(record, keys);
  }
  const out: Record<string, unknown> = {};
  let shown = 0;
  for (const key of keys) {
    if (key === token) setOwn(out, key, excerpt(record[key], tokens, i + 1));
    else if (shown < SIBLING_SCALARS && isScalar(record[key])) {
      setOwn(out, key, record[key]);
      shown++;
    }
  }
  const hidden = keys.length - 1 - shown;
  if (hidden > 0) out['…'] = `${hidden} more key${hidden === 1 ? '' : 's'}`;
  return out;
}

/** An object's keys with their values summarised one level deep. */
function shallow(record: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys.slice(0, LISTED_KEYS)) setOwn(out, key, summary(record[key]));
  if (keys.length > LISTED_KEYS) out['…'] = `${keys.length - LISTED_KEYS} more keys`;
  return out;
}

function summary(value: unknown): unknown {
  if (Array.isArray(value)) return `[${value.length} item${value.length === 1 ? '' : 's'}]`;
  if (value !== null && typeof value === 'object') return '{…}';
  return value;
}

function isScalar(value: unknown): boolean {
  return value === null || (typeof value !== 'object' && typeof value !== 'function');
}
