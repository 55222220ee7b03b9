/**
 * The bundles a capability declaration obligates in a compliance tree, read from the tree's own `index.json`.
 *
 * AdCP's conformance text (docs/building/verification/conformance.mdx): "Every agent satisfies the universal layer.
 * Each `supported_protocols` claim adds a protocol baseline. Each `specialisms` claim adds a specialism baseline", and
 * "A `specialisms` claim obligates the specialism's storyboard in addition to its parent protocol baseline". So: every
 * universal storyboard the index lists, the baseline of each declared protocol (its `supported_protocols` value,
 * `media_buy`, is the index's protocol id with `-` for `_`, `media-buy`), and the bundle of each declared specialism
 * whose parent protocol is declared too.
 *
 * This used to be `@adcp/sdk/testing`'s `resolveStoryboardsForCapabilities`, imported from the user's install. The
 * same storyboards in the same order (test/plugin/capabilities.test.ts holds it against the reference on the installed
 * corpus; bench/selection.mjs on @adcp/sdk 13's corpora and the 3.1 / 3.2 bundles), but importing it cost a run 1.3 s
 * and 120 MB of the main process with @adcp/sdk 13, and it applied the installed SDK's table of protocols to whatever
 * corpus the run took (a fetched 3.1 corpus under a 3.0 SDK). The tree's index is the corpus's own. Where the two
 * differ (docs/conformance.md, the row "which storyboards a capability declaration selects"): a declared protocol the
 * corpus has no baseline for (`measurement` in 3.1) is said rather than passed over, and a specialism whose parent
 * protocol is declared but has no baseline is still run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigurationError } from '../model/errors.js';

/** A bundle of the tree: its id, and the path (relative, `/`-separated) its storyboards start with. */
interface Bundle {
  id: string;
  path: string;
}

/** What the declaration obligates, and what in it the corpus cannot assess. */
export interface Obligations {
  /**
   * The obligated bundles: each universal storyboard (`universal/<name>.yaml`), then each declared protocol's baseline
   * (`protocols/<id>/`), then each declared specialism's (`specialisms/<id>/`), in the order declared, each once.
   */
  bundles: Bundle[];
  /** Declared protocols with no baseline in this corpus (unknown to it, or known without storyboards). */
  protocolsWithoutBaseline: string[];
  /** Declared specialisms the corpus does not know. */
  unknownSpecialisms: string[];
  /** Declared specialisms whose parent protocol is not declared: not run. */
  orphanSpecialisms: { specialism: string; protocol: string }[];
  /** The index's protocol and specialism ids and the corpus version, for the warnings' text. */
  known: { protocols: string[]; specialisms: string[]; version?: string };
}

interface ComplianceIndex {
  adcp_version?: unknown;
  universal?: unknown;
  protocols?: unknown;
  specialisms?: unknown;
}

const listed = <T>(value: unknown, keep: (item: unknown) => item is T): T[] =>
  Array.isArray(value) ? value.filter(keep) : [];
const isName = (item: unknown): item is string => typeof item === 'string';
const isEntry = (item: unknown): item is { id: string; has_baseline?: unknown; protocol?: unknown } =>
  typeof (item as { id?: unknown } | null)?.id === 'string';

/**
 * `compliance_testing` was once declared among the protocols; it is its own capability block now, and the corpus's
 * deterministic-testing storyboards are universal. Declared the old way, it obligates nothing more, and is no error.
 */
const LEGACY_PROTOCOLS = new Set(['compliance_testing']);

/** The obligations of `declared` in the compliance tree at `root` (its `index.json`). */
export function obligations(
  root: string,
  declared: { supported_protocols?: readonly string[]; specialisms?: readonly string[] },
): Obligations {
  let index: ComplianceIndex;
  try {
    index = JSON.parse(readFileSync(join(root, 'index.json'), 'utf8')) as ComplianceIndex;
  } catch (error) {
    throw new ConfigurationError(
      `capability-driven selection reads a corpus's protocols and specialisms from its index.json, and ${join(root, 'index.json')} cannot be read (${(error as Error).message}). Point the run at a whole compliance tree (compliance.version / compliance.path, ADCP_COMPLIANCE), or name the storyboards to run (compliance.storyboards / --storyboards).`,
    );
  }
  const protocols = listed(index.protocols, isEntry);
  const specialisms = listed(index.specialisms, isEntry);
  const universal = new Set(listed(index.universal, isName));
  const bundles = new Map<string, string>([...universal].map((name) => [`universal/${name}.yaml`, name]));
  const result: Obligations = {
    bundles: [],
    protocolsWithoutBaseline: [],
    unknownSpecialisms: [],
    orphanSpecialisms: [],
    known: {
      protocols: protocols.map((p) => p.id),
      specialisms: specialisms.map((s) => s.id),
      ...(typeof index.adcp_version === 'string' ? { version: index.adcp_version } : {}),
    },
  };
  const declaredProtocols = new Set<string>();
  for (const claim of declared.supported_protocols ?? []) {
    if (LEGACY_PROTOCOLS.has(claim)) continue;
    const id = claim.replaceAll('_', '-');
    const entry = protocols.find((p) => p.id === id);
    if (entry) declaredProtocols.add(id);
    if (entry?.has_baseline === true) bundles.set(`protocols/${id}/`, id);
    else if (!result.protocolsWithoutBaseline.includes(claim)) result.protocolsWithoutBaseline.push(claim);
  }
  for (const claim of declared.specialisms ?? []) {
    const entry = specialisms.find((s) => s.id === claim);
    // A specialism that became a universal storyboard (`signed-requests`) is run by every agent already.
    if (!entry) {
      if (!universal.has(claim) && !result.unknownSpecialisms.includes(claim)) result.unknownSpecialisms.push(claim);
    } else if (typeof entry.protocol === 'string' && !declaredProtocols.has(entry.protocol)) {
      if (!result.orphanSpecialisms.some((o) => o.specialism === claim))
        result.orphanSpecialisms.push({ specialism: claim, protocol: entry.protocol });
    } else bundles.set(`specialisms/${claim}/`, claim);
  }
  result.bundles = [...bundles].map(([path, id]) => ({ id, path }));
  return result;
}
