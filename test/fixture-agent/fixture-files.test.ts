/**
 * Static checks on the fixture storyboards and test kit: authored exactly as
 * storyboard-schema.yaml describes, referencing only tools the fixture agent
 * serves, schemas that exist, error codes from the enum, and context values an
 * earlier step captures. Whether they pass against the agent is checked by
 * reference-runner.test.ts (and by the project's own runner).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LineCounter, parse as parseYaml, parseDocument, isMap, isSeq, type YAMLMap } from 'yaml';
import { TOOL_NAMES } from '../../fixtures/agent/behaviours.mjs';
import { FIXTURE_TEST_KIT_PATH } from '../../fixtures/agent/server.mjs';
import { SCHEMAS_DIR, errorCodes } from './adcp-schemas.js';

const STORYBOARD_DIR = fileURLToPath(new URL('../../fixtures/storyboards/', import.meta.url));
const SCHEMA_COMMENT = '# yaml-language-server: $schema=../../schema/storyboard.schema.json';
const PROJECT_SCHEMA = fileURLToPath(new URL('../../schema/storyboard.schema.json', import.meta.url));

/** Runner-side pseudo-tasks (HTTP probes and flag assertions), storyboard-schema.yaml + security.yaml. */
const PROBE_TASKS = ['protected_resource_metadata', 'oauth_auth_server_metadata', 'assert_contribution'];
const CHECKS = [
  'response_schema',
  'field_present',
  'envelope_field_present',
  'field_value',
  'field_value_or_absent',
  'status_code',
  'http_status',
  'http_status_in',
  'error_code',
  'on_401_require_header',
  'resource_equals_agent_url',
  'any_of',
  'refs_resolve',
  'a2a_submitted_artifact',
];
/** @adcp/sdk > testing/storyboard/test-kit.js > PROBE_TASK_ALLOWLIST. */
const PROBE_TASK_ALLOWLIST = [
  'list_creatives',
  'get_media_buy_delivery',
  'list_authorized_properties',
  'get_signals',
  'list_si_sessions',
];

const files = readdirSync(STORYBOARD_DIR)
  .filter((f) => f.endsWith('.storyboard.yaml'))
  .sort();
const storyboards = files.map((file) => {
  const path = join(STORYBOARD_DIR, file);
  const text = readFileSync(path, 'utf8');
  return { file, path, text, doc: parseYaml(text) as any };
});

function steps(storyboard: any): any[] {
  return storyboard.phases.flatMap((phase: any) => phase.steps);
}

describe('fixture storyboards', () => {
  it('exist (2-4 of them) with unique ids', () => {
    expect(files.length).toBeGreaterThanOrEqual(2);
    expect(files.length).toBeLessThanOrEqual(4);
    const ids = storyboards.map((s) => s.doc.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  describe.each(storyboards)('$file', ({ path, text, doc }) => {
    it('starts with the yaml-language-server schema comment', () => {
      expect(text.split('\n')[0]).toBe(SCHEMA_COMMENT);
    });

    it('has the top-level fields of storyboard-schema.yaml', () => {
      expect(doc.id).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(doc.version).toMatch(/^\d+\.\d+\.\d+$/);
      for (const field of ['title', 'category', 'summary', 'narrative'])
        expect(typeof doc[field], field).toBe('string');
      expect(doc.phases.length).toBeGreaterThan(0);
    });

    it('points prerequisites.test_kit (relative to the file) at the fixture kit', () => {
      expect(resolve(dirname(path), doc.prerequisites.test_kit)).toBe(FIXTURE_TEST_KIT_PATH);
    });

    it('gives every phase and step a readable id, title and narrative; step ids are unique in the storyboard', () => {
      for (const phase of doc.phases) {
        expect(phase.id).toMatch(/^[a-z][a-z0-9_]*$/);
        expect(phase.title).toMatch(/\w+ \w+|\w{4,}/);
        expect(typeof phase.narrative).toBe('string');
        expect(phase.steps.length).toBeGreaterThan(0);
      }
      for (const step of steps(doc)) {
        expect(step.id).toMatch(/^[a-z][a-z0-9_]*$/);
        expect(step.title).toMatch(/^\S.* \S/);
        expect(typeof step.narrative).toBe('string');
      }
      const ids = steps(doc).map((s) => s.id);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('only calls tools the fixture agent serves (or runner probes)', () => {
      for (const step of steps(doc)) {
        if (String(step.task).startsWith('$test_kit.')) expect(TOOL_NAMES).toContain(step.task_default);
        else expect([...TOOL_NAMES, ...PROBE_TASKS]).toContain(step.task);
      }
    });

    it('references request/response schemas that exist', () => {
      for (const step of steps(doc)) {
        for (const ref of [step.schema_ref, step.response_schema_ref].filter(Boolean)) {
          expect(existsSync(join(SCHEMAS_DIR, ref)), ref).toBe(true);
        }
      }
    });

    it('uses known checks, complete validations, and enum error codes', () => {
      const codes = errorCodes();
      for (const step of steps(doc)) {
        for (const v of step.validations ?? []) {
          expect(CHECKS).toContain(v.check);
          expect(typeof v.description).toBe('string');
          if (v.check === 'field_value') expect(v).toHaveProperty('value');
          if (v.check === 'field_value_or_absent') expect('value' in v || 'allowed_values' in v).toBe(true);
          if (['field_present', 'field_value', 'field_value_or_absent'].includes(v.check))
            expect(typeof v.path).toBe('string');
          if (v.check === 'error_code') {
            expect(step.expect_error).toBe(true);
            for (const code of v.allowed_values ?? [v.value]) expect(codes).toContain(code);
          }
        }
      }
    });

    it('uses only the auth shapes the schema allows (no literal credentials)', () => {
      for (const step of steps(doc)) {
        if (step.auth === undefined || step.auth === 'none') continue;
        expect(['api_key', 'basic', 'oauth_bearer']).toContain(step.auth.type);
        expect(step.auth).not.toHaveProperty('value');
        expect('from_test_kit' in step.auth || 'value_strategy' in step.auth).toBe(true);
      }
    });

    it('substitutes only values an earlier step captured', () => {
      const captured = new Set<string>();
      const seen = new Set<string>();
      for (const step of steps(doc)) {
        const request = JSON.stringify(step.sample_request ?? {});
        for (const [, name] of request.matchAll(/\$context\.([A-Za-z_][\w-]*)/g))
          expect(captured, `$context.${name} in ${step.id}`).toContain(name);
        for (const [, id] of request.matchAll(/\{\{prior_step\.([\w-]+)\./g))
          expect(seen, `prior_step.${id} in ${step.id}`).toContain(id);
        for (const output of step.context_outputs ?? []) captured.add(output.name);
        seen.add(step.id);
      }
    });

    it('puts each validation on its own line, so results map to source positions', () => {
      const lineCounter = new LineCounter();
      const document = parseDocument(text, { lineCounter });
      const lines: number[] = [];
      const phases = document.get('phases') as any;
      for (const phase of phases.items as YAMLMap[]) {
        for (const step of (phase.get('steps') as any).items as YAMLMap[]) {
          const validations = step.get('validations');
          if (!isSeq(validations)) continue;
          for (const item of validations.items) {
            expect(isMap(item)).toBe(true);
            lines.push(lineCounter.linePos((item as YAMLMap).range![0]).line);
          }
        }
      }
      expect(new Set(lines).size).toBe(lines.length);
    });

    it.skipIf(!existsSync(PROJECT_SCHEMA))('validates against schema/storyboard.schema.json', async () => {
      const schema = JSON.parse(readFileSync(PROJECT_SCHEMA, 'utf8'));
      const draft2020 = String(schema.$schema ?? '').includes('2020-12');
      const { default: AjvClass } = draft2020 ? await import('ajv/dist/2020.js') : await import('ajv');
      const ajv = new (AjvClass as any)({ strict: false, allErrors: true });
      const validate = ajv.compile(schema);
      expect(validate(doc) ? [] : validate.errors).toEqual([]);
    });
  });
});

describe('fixture test kit', () => {
  const kit = parseYaml(readFileSync(FIXTURE_TEST_KIT_PATH, 'utf8'));

  it('is a brand kit: id, demo-<kit>- API key, allowlisted probe task', () => {
    expect(kit.id).toBe('fixture_brand');
    expect(kit.auth.api_key).toMatch(new RegExp(`^demo-${kit.id.replace(/_/g, '-')}-`));
    expect(PROBE_TASK_ALLOWLIST).toContain(kit.auth.probe_task);
    expect(TOOL_NAMES).toContain(kit.auth.probe_task);
  });

  it('declares the Basic credential in the shape security 3.1.0-rc.2 reads (auth.basic.{username,password})', () => {
    expect(kit.auth.basic).toEqual({ username: expect.any(String), password: expect.any(String) });
  });

  it('carries a brand block with house, brand_id and names', () => {
    expect(kit.brand).toMatchObject({
      house: { domain: 'fixture-brand.example' },
      brand_id: 'fixture_brand',
      names: [{ en: 'Fixture Brand' }],
    });
  });
});
