/**
 * A tolerant, indexed view of the raw storyboard data for the authoring
 * rules. The rules also run on storyboards that failed the schema (so one
 * run reports everything), therefore nothing here trusts a type: a phase
 * that is not a mapping is skipped, an id that is not a string is absent.
 */
import { resolve, sep } from 'node:path';
import type { KeyPolicy } from '../format.js';
import type { AdcpKnowledge } from '../adcp-tasks.js';
import type { DiagnosticSink } from '../diagnostics.js';
import { isPlainObject } from '../paths.js';
import type { DataPath, SourceMap } from '../source-map.js';
import type { SourceLocation } from '../../model/storyboard.js';

export interface RawValidation {
  index: number;
  path: DataPath;
  raw: Record<string, unknown>;
}

export interface RawStep {
  index: number;
  path: DataPath;
  raw: Record<string, unknown>;
  id: string | undefined;
  phase: RawPhase;
  validations: RawValidation[];
}

export interface RawPhase {
  index: number;
  path: DataPath;
  raw: Record<string, unknown>;
  id: string | undefined;
  steps: RawStep[];
}

export interface RuleContext {
  root: Record<string, unknown>;
  phases: RawPhase[];
  /** Every step of the storyboard in document order. */
  steps: RawStep[];
  map: SourceMap;
  sink: DiagnosticSink;
  file: string;
  corpusRoot: string | undefined;
  /** Unknown keys and check kinds: errors (`strict`), warnings for near misses (`lenient`), or named warnings (`forward`). */
  keys: KeyPolicy;
  /** `keys === 'strict'`: what a rule that is an error for authors and a warning otherwise asks. */
  strictKeys: boolean;
  /** The AdCP version the storyboard is written for, when known (format.ts). */
  formatVersion: string | undefined;
  /** Position of a value (a mapping: its first key). */
  at(path: DataPath): SourceLocation;
  /** Position of the key of the last path segment. */
  keyAt(path: DataPath): SourceLocation;
  /** Position of `token` inside the string at `path` (its `occurrence`-th, 0-based), else of the value. */
  tokenAt(path: DataPath, token: string, occurrence?: number): SourceLocation;
  /** AdCP tasks, runner tasks and request schemas (adcp-tasks.ts); absent, task and sample_request checks are off. */
  adcp: AdcpKnowledge | undefined;
}

export function buildRuleContext(
  root: Record<string, unknown>,
  map: SourceMap,
  sink: DiagnosticSink,
  corpusRoot: string | undefined,
  keys: KeyPolicy = 'strict',
  adcp?: AdcpKnowledge,
  formatVersion?: string,
): RuleContext {
  const phases: RawPhase[] = [];
  const steps: RawStep[] = [];
  const rawPhases = Array.isArray(root.phases) ? root.phases : [];
  rawPhases.forEach((rawPhase, p) => {
    if (!isPlainObject(rawPhase)) return;
    const phase: RawPhase = {
      index: p,
      path: ['phases', p],
      raw: rawPhase,
      id: stringOrUndefined(rawPhase.id),
      steps: [],
    };
    phases.push(phase);
    const rawSteps = Array.isArray(rawPhase.steps) ? rawPhase.steps : [];
    rawSteps.forEach((rawStep, s) => {
      if (!isPlainObject(rawStep)) return;
      const path = [...phase.path, 'steps', s];
      const validations: RawValidation[] = [];
      const rawValidations = Array.isArray(rawStep.validations) ? rawStep.validations : [];
      rawValidations.forEach((raw, v) => {
        if (isPlainObject(raw)) validations.push({ index: v, path: [...path, 'validations', v], raw });
      });
      const step: RawStep = { index: s, path, raw: rawStep, id: stringOrUndefined(rawStep.id), phase, validations };
      phase.steps.push(step);
      steps.push(step);
    });
  });
  return {
    root,
    phases,
    steps,
    map,
    sink,
    file: sink.file,
    corpusRoot,
    keys,
    strictKeys: keys === 'strict',
    formatVersion,
    at: (path) => map.valueLocation(path),
    keyAt: (path) => map.keyLocation(path),
    tokenAt: (path, token, occurrence) => map.locationInValue(path, token, occurrence),
    adcp,
  };
}

/** The file lies in the compliance tree the run uses (a published storyboard, not the user's own). */
export function inComplianceTree(ctx: Pick<RuleContext, 'corpusRoot' | 'file'>): boolean {
  if (!ctx.corpusRoot) return false;
  const root = resolve(ctx.corpusRoot) + sep;
  return resolve(ctx.file).startsWith(root);
}

export function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** `step "x" (phase "p")` — how messages name a step. */
export function stepLabel(step: RawStep): string {
  return `step "${step.id ?? `#${step.index + 1}`}"`;
}

export function phaseLabel(phase: RawPhase): string {
  return `phase "${phase.id ?? `#${phase.index + 1}`}"`;
}

export function formatLocation(at: SourceLocation): string {
  return `${at.line}:${at.column}`;
}
