/**
 * Local satisfaction of one create_media_buy package's format selector against the product a prior get_products
 * answer described (storyboard-schema.yaml > "Canonical format satisfaction"). The selector is read as
 * media-buy/package-request.json resolves it:
 *
 * - `format_option_refs[]` wins when present (`format_ids` beside it is a legacy-compat hint the seller ignores): each
 *   ref must select one of the product's `format_options[]` — `scope: "product"` by `format_option_id` among the
 *   product-local options (no `publisher_domain`), `scope: "publisher"` by `{ publisher_domain, format_option_id }`.
 *   A product with no `format_options[]`, or none publishing a `format_option_id`, has nothing to resolve against;
 * - `format_ids[]` otherwise: each legacy id is normalised before it is compared, in the registry's resolution order
 *   (registries/v1-canonical-mapping.json) — through a declaration's `v1_format_ref[]` (step 1, the seller's
 *   authoritative link: that declaration), else through the registry's literal entries (step 3,
 *   v1-canonical-registry.ts) into a canonical selector gated against the declarations (format-gating.ts). Steps 2
 *   and 4 (a `canonical` annotation on the v1 format file, a structural match of its slots) need the v1 format
 *   definition, which a create_media_buy step does not carry. An id neither path normalises is satisfied only by being
 *   one of the product's own `format_ids[]` (package-request.json: "`format_ids` only. Existing named-format
 *   behavior; unchanged");
 * - `format_kind` (with `params`) otherwise: a direct canonical selector, gated against the declarations of that kind;
 * - none of the three: every format of the product is active, which satisfies it.
 *
 * The declarations are the product's `format_options[]` — the closed set (core/product-format-declaration.json). A
 * legacy-only product (`format_ids[]` and no `format_options[]`) is projected through the registry, as an SDK projects
 * the v1 wire shape (registries/v1-canonical-mapping.json).
 */
import { isPlainObject } from '../model/path.js';
import { canonicalizeUrl } from '../signing/canonical-url.js';
import { selectorSatisfies, type Selector } from './format-gating.js';
import { projectV1FormatId } from './v1-canonical-registry.js';

type Json = Readonly<Record<string, unknown>>;

export interface Satisfaction {
  satisfied: boolean;
  /** The selector that decided, as a JSON Pointer relative to the package (`/format_ids/0`; `''` for none). */
  at: string;
  /** Why, in words. */
  reason: string;
  /** What was not compared (composite parameters). */
  notes: string[];
}

interface Declaration extends Selector {
  /** `format_options[0] (canonical_formats_image_mrec)`, or `format_ids[0] (display_300x250, projected)`. */
  label: string;
}

const satisfied = (at: string, reason: string, notes: string[] = []): Satisfaction => ({
  satisfied: true,
  at,
  reason,
  notes,
});
const unsatisfied = (at: string, reason: string): Satisfaction => ({ satisfied: false, at, reason, notes: [] });

const show = (value: unknown): string => JSON.stringify(value) ?? String(value);

function formatOptions(product: Json): Json[] {
  return Array.isArray(product.format_options) ? product.format_options.filter(isPlainObject) : [];
}

/** The product's closed set: its `format_options[]`, or, for a legacy-only product, its `format_ids[]` projected. */
function declarationsOf(product: Json): Declaration[] {
  const options = formatOptions(product);
  if (options.length > 0)
    return options.flatMap((option, i) =>
      typeof option.format_kind === 'string'
        ? [
            {
              format_kind: option.format_kind,
              params: isPlainObject(option.params) ? option.params : {},
              label: `format_options[${i}]${typeof option.format_option_id === 'string' ? ` (${option.format_option_id})` : ''}`,
            },
          ]
        : [],
    );
  const ids = Array.isArray(product.format_ids) ? product.format_ids : [];
  return ids.flatMap((id, i) => {
    const projected = isFormatId(id) ? projectFormatId(id) : undefined;
    return projected ? [{ ...projected, label: `format_ids[${i}] (${id.id}, projected)` }] : [];
  });
}

interface FormatId {
  agent_url: string;
  id: string;
  width?: unknown;
  height?: unknown;
  duration_ms?: unknown;
}

function isFormatId(value: unknown): value is FormatId {
  return isPlainObject(value) && typeof value.agent_url === 'string' && typeof value.id === 'string';
}

/** core/format-id.json: agent_url compared after URL canonicalization (docs reference/url-canonicalization). */
function canonicalAgentUrl(url: string): string {
  try {
    return canonicalizeUrl(url).targetUri;
  } catch {
    return url;
  }
}

/** Two format ids name the same format: the same agent (canonicalized), id, and parameters (a parameterized id is a variant of its own). */
function sameFormatId(a: FormatId, b: FormatId): boolean {
  return (
    a.id === b.id &&
    a.width === b.width &&
    a.height === b.height &&
    a.duration_ms === b.duration_ms &&
    canonicalAgentUrl(a.agent_url) === canonicalAgentUrl(b.agent_url)
  );
}

/** A legacy id through the registry; a parameterized id's own width, height and duration narrow the projection. */
function projectFormatId(id: FormatId): Selector | undefined {
  const projected = projectV1FormatId(id.id);
  if (!projected) return undefined;
  const params: Record<string, unknown> = { ...projected.params };
  if (typeof id.width === 'number' && typeof id.height === 'number')
    Object.assign(params, { width: id.width, height: id.height });
  if (typeof id.duration_ms === 'number') params.duration_ms_exact = id.duration_ms;
  return { format_kind: projected.format_kind, params };
}

type Gated = { declaration: Declaration; notes: string[] } | { declaration?: undefined; reason: string };

/** The first declaration the selector satisfies, or why none does. */
function gate(selector: Selector, declarations: readonly Declaration[]): Gated {
  const reasons: string[] = [];
  for (const declaration of declarations.filter((d) => d.format_kind === selector.format_kind)) {
    const verdict = selectorSatisfies(selector, declaration);
    if (verdict.ok) return { declaration, notes: verdict.notes };
    reasons.push(`${declaration.label}: ${verdict.reason}`);
  }
  if (reasons.length > 0) return { reason: reasons.join('; ') };
  const kinds = [...new Set(declarations.map((d) => d.format_kind))];
  return {
    reason: `format_kind "${selector.format_kind}" is outside the product's closed set (${kinds.length > 0 ? kinds.join(', ') : 'no canonical declaration'})`,
  };
}

function formatOptionRefs(refs: unknown, product: Json): Satisfaction {
  const at = '/format_option_refs';
  if (!Array.isArray(refs) || refs.length === 0) return unsatisfied(at, 'format_option_refs is not a non-empty array');
  const options = formatOptions(product);
  if (options.length === 0)
    return unsatisfied(
      at,
      'the product has no format_options[]: a legacy-format-only product has no closed set to resolve format_option_refs against',
    );
  if (!options.some((o) => typeof o.format_option_id === 'string'))
    return unsatisfied(
      at,
      'no format_options[] entry of the product publishes a format_option_id (format_option_refs_not_published)',
    );
  const resolved: string[] = [];
  for (const [i, ref] of refs.entries()) {
    const scope = isPlainObject(ref) ? ref.scope : undefined;
    if (!isPlainObject(ref) || (scope !== 'product' && scope !== 'publisher'))
      return unsatisfied(
        `${at}/${i}`,
        `format_option_refs[${i}] ${show(ref)} is not a FormatOptionRef (scope "product" or "publisher")`,
      );
    const match = options.findIndex(
      (o) =>
        typeof ref.format_option_id === 'string' &&
        o.format_option_id === ref.format_option_id &&
        (scope === 'product'
          ? o.publisher_domain === undefined
          : typeof ref.publisher_domain === 'string' && o.publisher_domain === ref.publisher_domain),
    );
    if (match < 0) {
      const published = options.flatMap((o) =>
        typeof o.format_option_id === 'string'
          ? [(typeof o.publisher_domain === 'string' ? `${o.publisher_domain}/` : '') + o.format_option_id]
          : [],
      );
      return unsatisfied(
        `${at}/${i}`,
        `format_option_refs[${i}] ${show(ref)} selects none of the product's format_options[] (${published.join(', ')})`,
      );
    }
    resolved.push(`format_option_refs[${i}] selects format_options[${match}]`);
  }
  return satisfied(at, resolved.join(', '));
}

/** One legacy id, normalised: whether it satisfies the product, and why. */
function legacyId(
  id: FormatId,
  product: Json,
  declarations: readonly Declaration[],
): { ok: boolean; reason: string; notes?: string[] } {
  const linked = formatOptions(product).findIndex(
    (o) => Array.isArray(o.v1_format_ref) && o.v1_format_ref.some((ref) => isFormatId(ref) && sameFormatId(ref, id)),
  );
  if (linked >= 0) return { ok: true, reason: `resolves through format_options[${linked}].v1_format_ref` };
  const listed =
    Array.isArray(product.format_ids) && product.format_ids.some((own) => isFormatId(own) && sameFormatId(own, id));
  if (listed && formatOptions(product).length === 0)
    return { ok: true, reason: "is one of the legacy-only product's format_ids[]" };
  const projected = projectFormatId(id);
  if (!projected) {
    return listed
      ? {
          ok: true,
          reason: "has no canonical projection and is one of the product's format_ids[] (named-format behaviour)",
        }
      : {
          ok: false,
          reason:
            "is linked by no format_options[].v1_format_ref, has no v1-canonical registry entry, and is not among the product's format_ids[]",
        };
  }
  const verdict = gate(projected, declarations);
  const as = `${projected.format_kind} ${show(projected.params)}`;
  return verdict.declaration
    ? {
        ok: true,
        reason: `projects through the v1-canonical registry to ${as}, which satisfies ${verdict.declaration.label}`,
        notes: verdict.notes,
      }
    : {
        ok: false,
        reason: `projects through the v1-canonical registry to ${as}, which satisfies no declaration: ${verdict.reason}`,
      };
}

function legacyFormatIds(ids: unknown, product: Json, declarations: readonly Declaration[]): Satisfaction {
  if (!Array.isArray(ids) || ids.length === 0) return unsatisfied('/format_ids', 'format_ids is not a non-empty array');
  const reasons: string[] = [];
  const notes: string[] = [];
  for (const [i, id] of ids.entries()) {
    if (!isFormatId(id))
      return unsatisfied(`/format_ids/${i}`, `format_ids[${i}] ${show(id)} is not a FormatId { agent_url, id }`);
    const verdict = legacyId(id, product, declarations);
    const said = `format_ids[${i}] ${show({ agent_url: id.agent_url, id: id.id })} ${verdict.reason}`;
    if (!verdict.ok) return unsatisfied(`/format_ids/${i}`, said);
    reasons.push(said);
    notes.push(...(verdict.notes ?? []));
  }
  return satisfied('/format_ids', reasons.join('; '), notes);
}

function directSelector(pkg: Json, declarations: readonly Declaration[]): Satisfaction {
  if (typeof pkg.format_kind !== 'string')
    return unsatisfied('/format_kind', `format_kind ${show(pkg.format_kind)} is not a canonical format kind`);
  if (pkg.params !== undefined && !isPlainObject(pkg.params))
    return unsatisfied('/params', `params ${show(pkg.params)} is not an object`);
  const selector: Selector = { format_kind: pkg.format_kind, params: isPlainObject(pkg.params) ? pkg.params : {} };
  const verdict = gate(selector, declarations);
  const as = `format_kind "${selector.format_kind}" with params ${show(selector.params)}`;
  return verdict.declaration
    ? satisfied('/format_kind', `${as} satisfies ${verdict.declaration.label}`, verdict.notes)
    : unsatisfied('/format_kind', `${as} satisfies no declaration of the product: ${verdict.reason}`);
}

/** Whether the package's format selector satisfies the product, read as package-request.json resolves it. */
export function packageSatisfaction(pkg: Json, product: Json): Satisfaction {
  if (pkg.format_option_refs !== undefined) return formatOptionRefs(pkg.format_option_refs, product);
  const declarations = declarationsOf(product);
  if (pkg.format_ids !== undefined) return legacyFormatIds(pkg.format_ids, product, declarations);
  if (pkg.format_kind !== undefined) return directSelector(pkg, declarations);
  return satisfied('', 'no format selector: every format of the product is active (package-request.json)');
}
