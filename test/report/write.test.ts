/** The line writeContractReport (src/report/write.ts) shows: its step count reads as English (`1 step`, `2 steps`). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ContractReport } from '../../src/report/build.js';
import { writeContractReport } from '../../src/report/write.js';

const dir = mkdtempSync(join(tmpdir(), 'adcp-write-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const withSteps = (total: number, passed: number) =>
  ({
    summary: {
      total_steps: total,
      steps_passed: passed,
      steps_failed: total - passed,
      steps_skipped: 0,
      steps_not_run: 0,
      tracks: [],
      schemas_used: [],
    },
  }) as unknown as ContractReport;

describe('writeContractReport', () => {
  it('says "1 step", not "1 steps"', () => {
    expect(writeContractReport(withSteps(1, 1), join(dir, 'one.json'))).toMatch(
      /^vitest-adcp: runner output contract report \(1 step: 1 passed, 0 failed, 0 skipped\) written to /,
    );
  });

  it('says "0 steps" and "2 steps"', () => {
    expect(writeContractReport(withSteps(0, 0), join(dir, 'none.json'))).toContain(
      '(0 steps: 0 passed, 0 failed, 0 skipped)',
    );
    expect(writeContractReport(withSteps(2, 1), join(dir, 'two.json'))).toContain(
      '(2 steps: 1 passed, 1 failed, 0 skipped)',
    );
  });
});
