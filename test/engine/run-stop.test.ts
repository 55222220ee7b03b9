/**
 * `StoryboardRun.stop()` (src/engine/run.ts): for a runner whose test run was cancelled (the run host's runs go ahead
 * of their tests). The call of the step under way is aborted (issue 31 item 10: SIGTERM no longer waits out a slow
 * agent), its record says cancelled; no later step calls the agent; a settle of a step that never ran rejects. Against the fixture agent, every call held 300 ms (`slow_ms_300`) and counted at a proxy.
 */
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import type { StoryboardRun } from '../../src/engine/run.js';
import type { Storyboard } from '../../src/model/storyboard.js';
import { openStoryboardRun } from '../../src/open-run.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import { countingProxy, type CountingProxy } from '../helpers/counting-proxy.js';
import { phasedStoryboard } from '../helpers/inline-run.js';

const slowUrl = (ms = 300) => `${inject('agentOrigin')}/x/slow_ms_${ms}/mcp`;

/** s1 fails its check (the agent echoes `x`, the check wants `y`); s2… pass. */
function storyboardOf(steps: number): Storyboard {
  const yaml = phasedStoryboard([
    {
      id: 'p',
      steps: Array.from({ length: steps }, (_, i) =>
        i === 0
          ? {
              id: 's1',
              task: 'get_adcp_capabilities',
              sample_request: { context: { correlation_id: 'x' } },
              validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'y' }],
            }
          : {
              id: `s${i + 1}`,
              task: 'get_adcp_capabilities',
              validations: [{ check: 'field_present', path: 'adcp' }],
            },
      ),
    },
  ]);
  const loaded = loadStoryboard(yaml, '/virtual/run-stop.storyboard.yaml');
  if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join('\n'));
  return loaded.storyboard;
}

let proxy: CountingProxy | undefined;
let run: StoryboardRun | undefined;
afterEach(async () => {
  await run?.close();
  run = undefined;
  await proxy?.close();
  proxy = undefined;
});

async function open(steps: number, slowMs?: number): Promise<{ run: StoryboardRun; proxy: CountingProxy }> {
  proxy = await countingProxy(slowUrl(slowMs));
  run = openStoryboardRun(storyboardOf(steps), { agentUrl: proxy.url, timeoutMs: 10_000 }, { env: {} });
  return { run, proxy };
}

/** Until the first step's call has reached the agent (it answers 300 ms later). */
const firstCallSent = (p: CountingProxy) =>
  vi.waitFor(() => expect(p.toolCalls()).toHaveLength(1), { timeout: 5_000, interval: 5 });

describe('StoryboardRun.stop()', () => {
  it('aborts the call under way at once: its record says cancelled (no verdict), and no later step calls the agent', async () => {
    // The agent holds every answer 8 s, and the step may wait 10 s: only the abort ends the step sooner.
    const { run, proxy } = await open(4, 8_000);
    const last = run.settle('p', 's4');
    const lastSettled = last.catch((error: unknown) => error);
    await firstCallSent(proxy);
    const stoppedAt = performance.now();
    run.stop();

    const error = await lastSettled;
    expect(performance.now() - stoppedAt).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/was stopped before step "p\/s4"/);
    const first = await run.settle('p', 's1');
    expect(first.status).toBe('failed');
    expect(first.result).toMatchObject({
      cancelled: true,
      error:
        'cancelled: the run was cancelled while this step waited for the agent, so its call was aborted and it has no verdict',
      validations: [],
    });
    expect(first.result.request?.operation).toBe('get_adcp_capabilities');
    expect(first.result.response).toBeUndefined();
    expect(proxy.toolCalls()).toEqual(['get_adcp_capabilities']);
  });

  it('rejects a settle of a step that never ran, asked after stop(), without calling the agent', async () => {
    const { run, proxy } = await open(3);
    const first = run.settle('p', 's1');
    await firstCallSent(proxy);
    run.stop();
    await expect(run.settle('p', 's2')).rejects.toThrow(
      /the run of storyboard "inline" was stopped before step "p\/s2"/,
    );
    expect((await first).result.cancelled).toBe(true);
    await expect(run.settle('p', 's3')).rejects.toThrow(/was stopped before step "p\/s3"/);
    // Nothing ran before s2 but s1: its `before` is s1 alone.
    expect(run.ranBefore('p', 's3').map((o) => `${o.result.step_id}:${o.status}`)).toEqual(['s1:failed']);
    // runAll of a stopped run: the steps that ran, nothing started.
    expect((await run.runAll()).map((o) => `${o.result.step_id}:${o.status}`)).toEqual(['s1:failed']);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(proxy.toolCalls()).toHaveLength(1);
  });

  it('stopped before any step: nothing calls the agent', async () => {
    const { run, proxy } = await open(2);
    run.stop();
    await expect(run.settle('p', 's1')).rejects.toThrow(/was stopped before step "p\/s1"/);
    expect(proxy.toolCalls()).toEqual([]);
    expect(proxy.counts('tools/list').size).toBe(0);
  });
});

describe('StoryboardRun.prepare()', () => {
  it('opens the session and reads the tool list, calls no tool, and the first step does not list the tools again', async () => {
    const { run, proxy } = await open(2);
    await run.prepare();
    expect(proxy.toolCalls()).toEqual([]);
    expect(Object.fromEntries(proxy.counts('initialize'))).toEqual({ none: 1 });
    expect(Object.fromEntries(proxy.counts('tools/list'))).toEqual({ none: 1 });
    expect((await run.settle('p', 's2')).status).toBe('passed');
    expect(proxy.toolCalls()).toHaveLength(2);
    expect(Object.fromEntries(proxy.counts('tools/list'))).toEqual({ none: 1 });
    expect(Object.fromEntries(proxy.counts('initialize'))).toEqual({ none: 1 });
  });

  it('does nothing for a run that was stopped, or whose configuration failed (no step of it reaches the agent)', async () => {
    const stopped = await open(1);
    stopped.run.stop();
    await stopped.run.prepare();
    expect(stopped.proxy.counts('initialize').size).toBe(0);
    await stopped.run.close();
    const misconfigured = openStoryboardRun(
      storyboardOf(1),
      { agentUrl: stopped.proxy.url, protocol: 'telepathy' as never },
      { env: {} },
    );
    await misconfigured.prepare();
    await misconfigured.close();
    expect(stopped.proxy.counts('initialize').size).toBe(0);
    expect(stopped.proxy.counts('tools/list').size).toBe(0);
  });
});
