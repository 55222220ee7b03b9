/**
 * The fixture agent's recovery table (fixtures/agent/adcp-error.mjs `RECOVERY`) against the AdCP error-code enum and
 * against the codes the fixture raises (issue 31 item 10): a code missing from the table was answered `terminal` — or,
 * for a failed async task, with no recovery at all — where the schema says a buyer can correct it. The live answers:
 * async-tasks.test.ts (a failed task's error), media-buy-management.test.ts (a seller rule's).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RECOVERY } from '../../fixtures/agent/adcp-error.mjs';

const fixture = join(import.meta.dirname, '..', '..', 'fixtures', 'agent');
/** The enum of the schemas @adcp/sdk ships (AdCP 3.0.x), with each code's recovery in enumMetadata. */
const sdkSchemas = join(import.meta.dirname, '..', '..', 'node_modules', '@adcp', 'sdk', 'dist', 'lib', 'schemas-data');
const errorCodes = JSON.parse(readFileSync(join(sdkSchemas, '3.0', 'enums', 'error-code.json'), 'utf8')) as {
  enum: string[];
  enumMetadata: Record<string, { recovery?: string }>;
};
/** Codes the fixture raises that are newer than the SDK's 3.0 schemas (AdCP 3.1.15 enumMetadata: transient). */
const NEWER_THAN_SDK = { IDEMPOTENCY_IN_FLIGHT: 'transient' };

/** Every AdCP error code the fixture's sources raise: AdcpTaskError / SellerError, and error objects' `code:`. */
function raisedCodes(): string[] {
  const files = readdirSync(fixture, { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.mjs') && !f.startsWith('hostile'),
  );
  const codes = new Set<string>();
  for (const file of files) {
    const text = readFileSync(join(fixture, file), 'utf8');
    for (const m of text.matchAll(/(?:AdcpTaskError|SellerError)\(\s*'([A-Z][A-Z_]+)'/g)) codes.add(m[1]!);
    for (const m of text.matchAll(/\bcode: '([A-Z][A-Z_]+)'/g)) codes.add(m[1]!);
  }
  return [...codes].filter((code) => errorCodes.enum.includes(code) || code in NEWER_THAN_SDK).sort();
}

describe("the fixture agent's recovery table", () => {
  it('has every code the fixture raises', () => {
    const raised = raisedCodes();
    expect(raised.length).toBeGreaterThan(15);
    expect(raised.filter((code) => !(code in RECOVERY))).toEqual([]);
  });

  it("gives each code the schema's recovery (enums/error-code.json > enumMetadata)", () => {
    const expected = Object.fromEntries(
      Object.keys(RECOVERY).map((code) => [
        code,
        errorCodes.enumMetadata[code]?.recovery ?? NEWER_THAN_SDK[code as keyof typeof NEWER_THAN_SDK],
      ]),
    );
    expect(RECOVERY).toEqual(expected);
  });
});
