/**
 * A validation's severity as the runner-output contract 2.6.0 grades it (storyboard-schema.yaml > Validation >
 * severity, expires_after_version, permanent_advisory):
 *
 * - `required` (the default) fails the step; `advisory` is reported with `passed: false` but does not
 *   (model/records.ts `failsStep`), and is counted apart (`validations_advisory_failed`).
 * - `expires_after_version`: when this runner's capability version is at or above it (semver precedence, pre-releases
 *   included: `3.2.0-rc.3 < 3.2.0`), the advisory is promoted to required and the record says so
 *   (`severity_promoted_from_advisory: true`); below it, `false`; no expiry, no field.
 * - A check the runner does not implement is graded before any of this (forward compatibility): no promotion is
 *   evaluated, so the field is absent.
 *
 * The capability version: the contract lets the runner choose what it corresponds to. vitest-adcp declares the AdCP
 * version whose storyboard format and grading rules it implements — the newest 3.1 corpus it is verified against —
 * so an author who writes `expires_after_version: "3.2.0"` gets the promotion once vitest-adcp grades 3.2.
 */
import type { ValidationResult } from '../model/records.js';
import type { Validation } from '../model/storyboard.js';

/** runner-output-contract.yaml > run_summary.runner_capability_version. */
export const RUNNER_CAPABILITY_VERSION = '3.1.19';

/** The record with the validation's `id` and its severity, promoted when its expiry has passed. */
export function withSeverity(result: ValidationResult, written: Validation): ValidationResult {
  const decorated: ValidationResult = { ...result };
  if (typeof written.id === 'string') decorated.id = written.id;
  if (result.note !== undefined) {
    // Not graded (forward compatibility): the declared severity, no promotion evaluated.
    if (written.severity === 'advisory') decorated.severity = 'advisory';
    return decorated;
  }
  if (written.severity !== 'advisory') {
    if (written.severity === 'required') decorated.severity = 'required';
    return decorated;
  }
  const expiry = written.expires_after_version;
  if (typeof expiry !== 'string') {
    decorated.severity = 'advisory';
    return decorated;
  }
  const promoted = semverAtLeast(RUNNER_CAPABILITY_VERSION, expiry);
  decorated.severity = promoted ? 'required' : 'advisory';
  decorated.severity_promoted_from_advisory = promoted;
  return decorated;
}

interface Parsed {
  core: [number, number, number];
  pre: (string | number)[];
}

function parse(version: string): Parsed | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(version.trim());
  if (!match) return undefined;
  const pre = match[4] ? match[4].split('.').map((id) => (/^\d+$/.test(id) ? Number(id) : id)) : [];
  return { core: [Number(match[1]), Number(match[2]), Number(match[3])], pre };
}

/** semver precedence (semver.org §11): `a >= b`. An unparsable `b` never promotes (the loader refuses one). */
export function semverAtLeast(a: string, b: string): boolean {
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return false;
  for (let i = 0; i < 3; i++) if (x.core[i] !== y.core[i]) return x.core[i]! > y.core[i]!;
  // A version without pre-release identifiers is above any of its pre-releases.
  if (x.pre.length === 0 || y.pre.length === 0) return x.pre.length === 0;
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i];
    const q = y.pre[i];
    if (p === undefined) return false; // fewer identifiers: lower
    if (q === undefined) return true;
    if (p === q) continue;
    if (typeof p === 'number' && typeof q === 'number') return p > q;
    if (typeof p === 'number') return false; // numeric identifiers are below alphanumeric ones
    if (typeof q === 'number') return true;
    return p > q;
  }
  return true;
}
