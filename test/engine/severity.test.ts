/**
 * A validation's severity and its promotion (engine/severity.ts), graded as runner-output contract 2.6.0 says:
 * the record's `id` and `severity`, `severity_promoted_from_advisory` tri-state, and the semver precedence that
 * decides a promotion (semver.org §11), pre-releases and build metadata included.
 */
import { describe, expect, it } from 'vitest';
import { RUNNER_CAPABILITY_VERSION, semverAtLeast, withSeverity } from '../../src/engine/severity.js';
import type { ValidationResult } from '../../src/model/records.js';
import type { Validation } from '../../src/model/storyboard.js';

const failed: ValidationResult = { check: 'field_present', passed: false, description: 'x' };
const written = (extra: Partial<Validation>): Validation => ({ check: 'field_present', ...extra }) as Validation;

describe('withSeverity', () => {
  it('echoes the validation id, and writes no severity for a validation that declares none', () => {
    expect(withSeverity(failed, written({ id: 'v1' }))).toEqual({ ...failed, id: 'v1' });
    expect(withSeverity(failed, written({}))).toEqual(failed);
    expect(withSeverity(failed, written({ id: 7 as unknown as string }))).toEqual(failed);
  });

  it('writes a declared required severity as is, never promoted', () => {
    expect(withSeverity(failed, written({ severity: 'required', expires_after_version: '3.0.0' }))).toEqual({
      ...failed,
      severity: 'required',
    });
  });

  it('an advisory without expiry stays advisory, with no promotion field', () => {
    expect(withSeverity(failed, written({ severity: 'advisory' }))).toEqual({ ...failed, severity: 'advisory' });
  });

  it('an advisory is promoted once the runner capability version reaches its expiry, and says so either way', () => {
    expect(
      withSeverity(failed, written({ severity: 'advisory', expires_after_version: RUNNER_CAPABILITY_VERSION })),
    ).toEqual({ ...failed, severity: 'required', severity_promoted_from_advisory: true });
    expect(withSeverity(failed, written({ severity: 'advisory', expires_after_version: '3.0.0' }))).toEqual({
      ...failed,
      severity: 'required',
      severity_promoted_from_advisory: true,
    });
    expect(withSeverity(failed, written({ severity: 'advisory', expires_after_version: '99.0.0' }))).toEqual({
      ...failed,
      severity: 'advisory',
      severity_promoted_from_advisory: false,
    });
  });

  it('a check graded with a note (not implemented): the declared severity only, no promotion evaluated', () => {
    const noted: ValidationResult = { ...failed, passed: true, note: 'runner does not implement check type "x"' };
    expect(withSeverity(noted, written({ id: 'n', severity: 'advisory', expires_after_version: '3.0.0' }))).toEqual({
      ...noted,
      id: 'n',
      severity: 'advisory',
    });
    expect(withSeverity(noted, written({ severity: 'required' }))).toEqual(noted);
    expect(withSeverity(noted, written({}))).toEqual(noted);
  });
});

describe('semverAtLeast (semver.org §11 precedence)', () => {
  // In ascending precedence: semver.org's own example chain, with build metadata that never counts.
  const ascending = [
    '0.9.9',
    '1.0.0-alpha',
    '1.0.0-alpha.1',
    '1.0.0-alpha.beta',
    '1.0.0-beta',
    '1.0.0-beta.2',
    '1.0.0-beta.11',
    '1.0.0-rc.1',
    '1.0.0',
    '1.0.1',
    '1.2.0',
    '1.10.0',
    '2.0.0',
    '10.0.0',
  ];

  it.each(ascending.flatMap((low, i) => ascending.slice(i + 1).map((high) => [low, high] as const)))(
    '%s < %s',
    (low, high) => {
      expect(semverAtLeast(high, low)).toBe(true);
      expect(semverAtLeast(low, high)).toBe(false);
    },
  );

  it.each(ascending)('%s >= itself', (v) => {
    expect(semverAtLeast(v, v)).toBe(true);
  });

  it('ignores build metadata and surrounding blanks', () => {
    expect(semverAtLeast('1.0.0+build.5', '1.0.0')).toBe(true);
    expect(semverAtLeast('1.0.0', '1.0.0+build.5')).toBe(true);
    expect(semverAtLeast('1.0.0-rc.1+b', '1.0.0')).toBe(false);
    expect(semverAtLeast(' 3.2.0 ', '3.2.0-rc.3')).toBe(true);
  });

  it('never promotes against a version it cannot parse, either side', () => {
    for (const bad of ['3.2', 'v3.2.0', '3.2.0.1', 'x3.2.0', '3.2.0x', '3.2.0-', '3.2.0-rc..1!', '']) {
      expect(semverAtLeast('9.9.9', bad), bad).toBe(false);
      expect(semverAtLeast(bad, '0.0.1'), bad).toBe(false);
    }
  });

  it('compares multi-digit numbers as numbers, not text', () => {
    expect(semverAtLeast('3.10.0', '3.9.0')).toBe(true);
    expect(semverAtLeast('3.1.19', '3.1.2')).toBe(true);
    expect(semverAtLeast('12.0.0', '3.0.0')).toBe(true);
    expect(semverAtLeast('3.2.0-rc.10', '3.2.0-rc.9')).toBe(true);
    expect(semverAtLeast('3.2.0-rc.9', '3.2.0-rc.10')).toBe(false);
    expect(semverAtLeast('3.2.0-rc.100', '3.2.0-rc.99')).toBe(true);
  });

  it('an identifier with letters and digits is compared as text, whole', () => {
    expect(semverAtLeast('3.2.0-rc2', '3.2.0-rc1')).toBe(true);
    expect(semverAtLeast('3.2.0-rc1', '3.2.0-rc2')).toBe(false);
    expect(semverAtLeast('3.2.0-2a', '3.2.0-1b')).toBe(true);
    expect(semverAtLeast('3.2.0-1b', '3.2.0-2a')).toBe(false);
  });
});
