/**
 * A storyboard can only name a test kit below the project root, the corpus
 * root or a directory the user allowed: a kit's values are sent to the agent
 * and written to reports (issue: hostile storyboards). Checked where a run is
 * opened (src/open-run.ts); a refused kit fails every step before anything is
 * sent, with the fix in the message.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStoryboardRun } from '../../src/open-run.js';
import { loadStoryboard } from '../../src/storyboard/load.js';

const outside = mkdtempSync(join(tmpdir(), 'adcp-outside-'));
const project = mkdtempSync(join(tmpdir(), 'adcp-project-'));
afterAll(() => {
  rmSync(outside, { recursive: true, force: true });
  rmSync(project, { recursive: true, force: true });
});
writeFileSync(join(outside, 'token.yaml'), 'auth:\n  api_key: stolen-cli-token\n');
mkdirSync(join(project, 'kits'));
writeFileSync(join(project, 'kits', 'mine.yaml'), 'auth:\n  api_key: project-key\n');
symlinkSync(join(outside, 'token.yaml'), join(project, 'kits', 'link.yaml'));

async function firstStepError(kit: string, extra: { testKitDirs?: string[] } = {}) {
  const yaml = `id: k\ntitle: K\nprerequisites: { test_kit: "${kit}" }\nphases:\n  - id: p\n    steps:\n      - { id: s, task: get_adcp_capabilities }\n`;
  const loaded = loadStoryboard(yaml, join(project, 'k.storyboard.yaml'));
  if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
  // An unreachable agent: a refused kit must fail the step before any call (no connection error in the message).
  const run = openStoryboardRun(
    loaded.storyboard,
    { agentUrl: 'http://127.0.0.1:9/mcp', projectRoot: project, timeoutMs: 2_000, ...extra },
    { env: {} },
  );
  try {
    const [outcome] = await run.runAll();
    return outcome!.result.error;
  } finally {
    await run.close();
  }
}

describe('test kit confinement', () => {
  it('refuses a kit outside the project and the corpus, naming the fix', async () => {
    expect(await firstStepError(join(outside, 'token.yaml'))).toBe(
      `cannot load test kit "${join(outside, 'token.yaml')}": ${join(outside, 'token.yaml')} is outside the project (${project}) and the compliance corpus; a storyboard may only name a test kit below them. To allow another directory, add it to adcpStoryboards({ testKitDirs: [...] })`,
    );
  });

  it('follows links before deciding', async () => {
    expect(await firstStepError('./kits/link.yaml')).toMatch(/is outside the project/);
  });

  it('reads a kit below the project, or below a directory the user allowed', async () => {
    expect(await firstStepError('./kits/mine.yaml')).not.toMatch(/test kit/);
    expect(await firstStepError(join(outside, 'token.yaml'), { testKitDirs: [outside] })).not.toMatch(/test kit/);
  });
});
