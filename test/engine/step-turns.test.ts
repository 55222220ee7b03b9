/**
 * `StoryboardRun.takeTurns` (src/engine/run.ts): a runner that shares the agent between runs (the run host) is asked
 * before each step that reaches the agent, by the step's index in `planned()`, and told after every step — the step's
 * call (and only it) between the two, and the step after waits for its turn. A step decided without the agent asks
 * for no turn; a step's clock starts with its turn. Against the fixture agent, counted at a proxy.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { countingProxy, type CountingProxy } from '../helpers/counting-proxy.js';
import { openInline, phasedStoryboard } from '../helpers/inline-run.js';

let proxy: CountingProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

describe('StoryboardRun.takeTurns', () => {
  it('asks before each step, tells after it, and the step calls the agent in between', async () => {
    proxy = await countingProxy(`${inject('agentOrigin')}/mcp`);
    const run = openInline(
      phasedStoryboard([
        { id: 'p', steps: [{ id: 'a', task: 'get_adcp_capabilities' }] },
        {
          id: 'q',
          steps: [
            { id: 'b', task: 'list_creative_formats' },
            { id: 'c', task: 'get_adcp_capabilities' },
          ],
        },
      ]),
      proxy.url,
    );
    expect(run.planned().map((s) => `${s.phase.id}/${s.step.id}`)).toEqual(['p/a', 'q/b', 'q/c']);
    const log: string[] = [];
    let release: (() => void) | undefined;
    run.takeTurns({
      before: async (index) => {
        log.push(`before ${index} (${proxy!.toolCalls().length} calls)`);
        // The second step waits until this test gives it its turn.
        if (index === 1) await new Promise<void>((resolve) => (release = resolve));
      },
      after: (index) => log.push(`after ${index} (${proxy!.toolCalls().length} calls)`),
    });
    const all = run.runAll();
    while (!release) await new Promise((resolve) => setTimeout(resolve, 10));
    // Waiting for its turn: the second step has not called the agent.
    expect(proxy.toolCalls()).toEqual(['get_adcp_capabilities']);
    release();
    await all;
    await run.close();
    expect(log).toEqual([
      'before 0 (0 calls)',
      'after 0 (1 calls)',
      'before 1 (1 calls)',
      'after 1 (2 calls)',
      'before 2 (2 calls)',
      'after 2 (3 calls)',
    ]);
  });

  it("a step decided without the agent asks for no turn (told after it all the same), a role's run of one does; a wait for a turn is not the step's time", async () => {
    proxy = await countingProxy(`${inject('agentOrigin')}/mcp`);
    const run = openInline(
      phasedStoryboard([
        {
          id: 'p',
          steps: [
            { id: 'a', task: 'get_adcp_capabilities' },
            // Graded by the runner from the contributions so far: no call.
            { id: 'graded', task: 'assert_contribution', validations: [{ check: 'any_of', allowed_values: ['x'] }] },
            // A runner task its role runs, reaching the agent's host (its brand.json): a turn, as a call.
            { id: 'jwks', task: 'fetch_brand_jwks' },
            { id: 'c', task: 'get_adcp_capabilities' },
          ],
        },
      ]),
      proxy.url,
    );
    const log: string[] = [];
    const WAIT_MS = 600;
    run.takeTurns({
      before: async (index) => {
        log.push(`before ${index}`);
        // The last step waits for its turn longer than its call takes.
        if (index === 3) await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
      },
      after: (index) => log.push(`after ${index}`),
    });
    const started = performance.now();
    const outcomes = await run.runAll();
    const elapsed = performance.now() - started;
    await run.close();
    expect(log).toEqual(['before 0', 'after 0', 'after 1', 'before 2', 'after 2', 'before 3', 'after 3']);
    expect(proxy.toolCalls()).toEqual(['get_adcp_capabilities', 'get_adcp_capabilities']);
    const last = outcomes[3]!.result;
    expect(last.passed, JSON.stringify(last)).toBe(true);
    // Its duration is its call's, not the wait before it: what the run took besides the wait bounds it, however slow
    // the machine (a bound of WAIT_MS itself failed whenever the call took that long). Counted with the wait, it would
    // exceed that by the wait less the first three steps' time: red here, where they take a few ms.
    expect(last.duration_ms).toBeLessThanOrEqual(Math.ceil(elapsed - WAIT_MS));
  });
});
