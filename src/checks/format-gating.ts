/**
 * Directional product gating: whether a canonical selector `{ format_kind, params }` — a package's direct selector, or a
 * legacy format id projected through the v1-canonical registry — satisfies one `format_options[]` declaration of the
 * product. The rules are AdCP 3.1's "Format matching vs product satisfaction" (docs/creative/canonical-formats.mdx,
 * restated in core/product-format-declaration.json and media-buy/package-request.json):
 *
 * - satisfaction is directional: a product that fixes `width` / `height`, `duration_ms_exact` or `duration_ms_range`
 *   is satisfied only by a selector that declares and matches that constraint — an under-specified selector is not a
 *   wildcard; a broad product accepts a more specific selector;
 * - ranges use containment, not overlap: every value the selector permits must fall within what the product accepts;
 *   an exact value satisfies a range it falls inside; a `null` endpoint of a duration range is unbounded;
 * - `duration_ms_exact` takes precedence over `duration_ms_range` when a declaration carries both;
 * - any other canonical parameter follows the "Narrows" definition (canonical-formats.mdx): a parameter the selector
 *   omits inherits the product's; one the product omits is the selector's own narrowing; one both declare must narrow
 *   the product's (a subset of an enum list, at most a `max_*`, at least a `min_*`, the same value otherwise). Composite
 *   parameters (`slots`, `platform_extensions`, other objects) are "unknown — pass", with a note.
 */
import { isPlainObject } from '../model/path.js';
import { jsonEqual } from './equality.js';

export interface Selector {
  format_kind: string;
  params: Readonly<Record<string, unknown>>;
}

/** `ok`: satisfied (with notes on what could not be compared); else the reason, in words. */
export type Gate = { ok: true; notes: string[] } | { ok: false; reason: string };

type Interval = readonly [lo: number, hi: number];
type Dimensions =
  | { mode: 'any' }
  | { mode: 'sizes'; sizes: readonly (readonly [number, number])[] }
  | { mode: 'box'; width: Interval; height: Interval };

/** Parameters the dimension and duration rules read; `pixel_ratios` is opaque in 3.1.x (v1-canonical-registry.ts). */
const GATED_APART = new Set([
  'width',
  'height',
  'sizes',
  'min_width',
  'max_width',
  'min_height',
  'max_height',
  'duration_ms_exact',
  'duration_ms_range',
  'pixel_ratios',
]);

const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

function dimensionsOf(params: Readonly<Record<string, unknown>>): Dimensions {
  const sizes = Array.isArray(params.sizes)
    ? params.sizes.flatMap((s) =>
        isPlainObject(s) && num(s.width) !== undefined && num(s.height) !== undefined
          ? [[s.width as number, s.height as number] as const]
          : [],
      )
    : [];
  if (sizes.length > 0) return { mode: 'sizes', sizes };
  const [width, height] = [num(params.width), num(params.height)];
  if (width !== undefined && height !== undefined) return { mode: 'sizes', sizes: [[width, height]] };
  const axis = (exact: number | undefined, min: unknown, max: unknown): Interval => [
    num(min) ?? exact ?? -Infinity,
    num(max) ?? exact ?? Infinity,
  ];
  const box = {
    mode: 'box' as const,
    width: axis(width, params.min_width, params.max_width),
    height: axis(height, params.min_height, params.max_height),
  };
  return [...box.width, ...box.height].every((bound) => !Number.isFinite(bound)) ? { mode: 'any' } : box;
}

const interval = ([lo, hi]: Interval, unit = ''): string =>
  lo === hi
    ? `${lo}${unit}`
    : lo === -Infinity && hi === Infinity
      ? 'any'
      : lo === -Infinity
        ? `at most ${hi}${unit}`
        : hi === Infinity
          ? `at least ${lo}${unit}`
          : `${lo}–${hi}${unit}`;

function describeDimensions(dims: Dimensions): string {
  if (dims.mode === 'any') return 'no dimensions';
  if (dims.mode === 'sizes') return dims.sizes.map(([w, h]) => `${w}x${h}`).join(' or ');
  return `width ${interval(dims.width)}, height ${interval(dims.height)}`;
}

const within = (value: number, [lo, hi]: Interval): boolean => value >= lo && value <= hi;
const inside = ([lo, hi]: Interval, outer: Interval): boolean => lo >= outer[0] && hi <= outer[1];

/** Every size the selector permits is one the product accepts. */
function dimensionsContained(request: Dimensions, product: Dimensions): boolean {
  if (product.mode === 'any') return true;
  if (request.mode === 'any') return false;
  if (request.mode === 'sizes')
    return request.sizes.every(([w, h]) =>
      product.mode === 'sizes'
        ? product.sizes.some(([pw, ph]) => pw === w && ph === h)
        : within(w, product.width) && within(h, product.height),
    );
  if (product.mode === 'box') return inside(request.width, product.width) && inside(request.height, product.height);
  // A range is inside a list of sizes only when it is one point of the list.
  const [w, h] = [request.width[0], request.height[0]];
  return request.width[1] === w && request.height[1] === h && product.sizes.some(([pw, ph]) => pw === w && ph === h);
}

function gateDimensions(request: Readonly<Record<string, unknown>>, product: Readonly<Record<string, unknown>>) {
  const [want, accepts] = [dimensionsOf(request), dimensionsOf(product)];
  if (dimensionsContained(want, accepts)) return undefined;
  if (want.mode === 'any')
    return `under-specified: the product accepts ${describeDimensions(accepts)}, and the selector declares no dimensions`;
  return `${describeDimensions(want)} is not contained in the product's ${describeDimensions(accepts)}`;
}

/** A declaration's duration: `duration_ms_exact` first, else `duration_ms_range` (a `null` endpoint is unbounded). */
function durationOf(params: Readonly<Record<string, unknown>>): Interval | undefined {
  const exact = num(params.duration_ms_exact);
  if (exact !== undefined) return [exact, exact];
  const range = params.duration_ms_range;
  if (!Array.isArray(range) || range.length !== 2) return undefined;
  const [lo, hi] = range;
  if ((lo !== null && num(lo) === undefined) || (hi !== null && num(hi) === undefined)) return undefined;
  return [num(lo) ?? -Infinity, num(hi) ?? Infinity];
}

function gateDuration(request: Readonly<Record<string, unknown>>, product: Readonly<Record<string, unknown>>) {
  const accepts = durationOf(product);
  if (!accepts) return undefined;
  const want = durationOf(request);
  if (!want)
    return `under-specified: the product accepts a duration of ${interval(accepts, ' ms')}, and the selector declares none`;
  if (inside(want, accepts)) return undefined;
  return `a duration of ${interval(want, ' ms')} is not contained in the product's ${interval(accepts, ' ms')}`;
}

const isScalar = (value: unknown): boolean => value === null || typeof value !== 'object';

/** One parameter both declare: undefined when the selector's value narrows the product's, `unknown` when not comparable, else the conflict. */
function narrows(key: string, want: unknown, accepts: unknown): string | undefined {
  if (jsonEqual(want, accepts)) return undefined;
  const words = key.split('_');
  const shown = `params.${key} ${JSON.stringify(want)}`;
  if (Array.isArray(want) && Array.isArray(accepts) && [...want, ...accepts].every(isScalar)) {
    const outside = want.filter((item) => !accepts.some((allowed) => jsonEqual(item, allowed)));
    return outside.length === 0
      ? undefined
      : `${shown} lists ${JSON.stringify(outside)}, which the product's ${JSON.stringify(accepts)} does not accept`;
  }
  if (typeof want === 'number' && typeof accepts === 'number') {
    if (words.includes('max')) return want <= accepts ? undefined : `${shown} exceeds the product's ${accepts}`;
    if (words.includes('min')) return want >= accepts ? undefined : `${shown} is below the product's ${accepts}`;
  }
  // A requirement the product leaves off may be asked for: `ssl_required: true` narrows `false`.
  if (words.at(-1) === 'required' && want === true && accepts === false) return undefined;
  if (!isScalar(want) || !isScalar(accepts)) return 'unknown';
  return `${shown} is not the product's ${JSON.stringify(accepts)}`;
}

function gateParams(request: Readonly<Record<string, unknown>>, product: Readonly<Record<string, unknown>>) {
  const notes: string[] = [];
  for (const [key, accepts] of Object.entries(product)) {
    if (GATED_APART.has(key) || accepts === undefined || request[key] === undefined) continue;
    const conflict = narrows(key, request[key], accepts);
    if (conflict === 'unknown')
      notes.push(`params.${key} differs from the product's and is composite: not compared ("Narrows": unknown — pass)`);
    else if (conflict) return { conflict, notes };
  }
  return { notes };
}

/**
 * Whether the selector's params satisfy those of a declaration of the same `format_kind` (the caller pairs them by
 * kind): dimensions, then duration, then the other parameters.
 */
export function selectorSatisfies(selector: Selector, declaration: Selector): Gate {
  const reason =
    gateDimensions(selector.params, declaration.params) ?? gateDuration(selector.params, declaration.params);
  if (reason) return { ok: false, reason };
  const { conflict, notes } = gateParams(selector.params, declaration.params);
  return conflict ? { ok: false, reason: conflict } : { ok: true, notes };
}
