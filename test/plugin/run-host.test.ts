/**
 * The run host (src/plugin/run-host.ts) and its client (src/adapter/hosted-run.ts), in process, over real loopback
 * sockets: the host's control endpoint on one side, the fixture agent (behind counting proxies) on the other. What a
 * worker's HostedRun reads (the host run's outcomes, secrets, the earlier steps it did not settle), when it runs a file
 * itself (not hosted, an edited storyboard, a released file), the scheduling (the run's order, a wanted file first, no
 * more than `concurrency` in flight, the preflight gate, cancel) and the token. test/e2e/run-host.test.ts covers the
 * same host through whole Vitest runs.
 */
import { request } from 'undici';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { HostedRun } from '../../src/adapter/hosted-run.js';
import { ConfigurationError } from '../../src/model/errors.js';
import type { StoryboardRun } from '../../src/engine/run.js';
import type { Storyboard } from '../../src/model/storyboard.js';
import { openStoryboardRun, settleBoundOf } from '../../src/open-run.js';
import { RunHost, type HostedFile } from '../../src/plugin/run-host.js';
import { controlRequest } from '../../src/transport/control-server.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import { countingProxy, type CountingProxy } from '../helpers/counting-proxy.js';
import { closedPort } from '../helpers/ports.js';
import { phasedStoryboard } from '../helpers/inline-run.js';

const origin = inject('agentOrigin');
const plainUrl = () => `${origin}/mcp`;
const slowUrl = () => `${origin}/x/slow_ms_300/mcp`;

const HOST_TOKEN = 'demo-host-token-1'; // demo-: a key the fixture agent accepts (its controller asks for one)
const LOCAL_TOKEN = 'local-secret-token-2';

/** `pass`: a step that passes; `fail`: one whose check fails (the agent echoes `x`, the check wants `y`). */
type Kind = 'pass' | 'fail';

function storyboardOf(name: string, kinds: Kind[]): Storyboard {
  const steps = kinds.map((kind, i) =>
    kind === 'pass'
      ? { id: `s${i + 1}`, task: 'get_adcp_capabilities', validations: [{ check: 'field_present', path: 'adcp' }] }
      : {
          id: `s${i + 1}`,
          task: 'get_adcp_capabilities',
          sample_request: { context: { correlation_id: 'x' } },
          validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'y' }],
        },
  );
  const yaml = phasedStoryboard([{ id: 'p', steps }], { id: `host_${name}`, title: `Host ${name}` });
  const loaded = loadStoryboard(yaml, `/virtual/run-host/${name}.storyboard.yaml`);
  if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join('\n'));
  return loaded.storyboard;
}

function openRun(storyboard: Storyboard, url: string, authToken: string): StoryboardRun {
  return openStoryboardRun(storyboard, { agentUrl: url, authToken, timeoutMs: 10_000 }, { env: {} });
}

/** The host's files, watched: the order they opened in, how many were open at once, each run's end. */
class Files {
  readonly order: string[] = [];
  readonly runs = new Map<string, StoryboardRun>();
  /** How many times the host prepared each file's run (its session and tool list, ahead of the preflight). */
  readonly prepared = new Map<string, number>();
  inFlight = 0;
  maxInFlight = 0;
  private readonly ended = new Map<string, Promise<void>>();

  file(storyboard: Storyboard, url: string): HostedFile {
    let end!: () => void;
    this.ended.set(storyboard.file, new Promise<void>((resolve) => (end = resolve)));
    return {
      file: storyboard.file,
      open: async () => {
        this.order.push(storyboard.id);
        this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
        const run = openRun(storyboard, url, HOST_TOKEN);
        this.runs.set(storyboard.file, run);
        const prepare = run.prepare.bind(run);
        run.prepare = () => {
          this.prepared.set(storyboard.file, (this.prepared.get(storyboard.file) ?? 0) + 1);
          return prepare();
        };
        const close = run.close.bind(run);
        run.close = async () => {
          try {
            await close();
          } finally {
            this.inFlight--;
            end();
          }
        };
        return { storyboard, run };
      },
    };
  }

  /** The host closed this file's run (and, a turn later, counted it done). */
  async endOf(storyboard: Storyboard): Promise<void> {
    await this.ended.get(storyboard.file);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

let host: RunHost | undefined;
const proxies: CountingProxy[] = [];
async function proxy(target: string): Promise<CountingProxy> {
  const p = await countingProxy(target);
  proxies.push(p);
  return p;
}
afterEach(async () => {
  await host?.close();
  host = undefined;
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

/** A worker's HostedRun, with its local run counted (`opened`) and going to its own proxy. */
function worker(storyboard: Storyboard, localUrl: string) {
  const opened: StoryboardRun[] = [];
  const openLocal = vi.fn(() => {
    const run = openRun(storyboard, localUrl, LOCAL_TOKEN);
    opened.push(run);
    return run;
  });
  const settleBound = vi.fn(() => settleBoundOf(storyboard, { agentUrl: localUrl, timeoutMs: 10_000 }, { env: {} }));
  return { run: new HostedRun(host!.config, storyboard, openLocal, settleBound), openLocal, opened, settleBound };
}

const brief = (o: { status: string; result: { step_id: string } }) => `${o.result.step_id}:${o.status}`;

describe('what a HostedRun reads from the host', () => {
  it("settles with the host run's outcomes and secrets; `before` lists only the earlier steps it did not settle", async () => {
    const storyboard = storyboardOf('outcomes', ['pass', 'fail', 'pass', 'pass']);
    const hostProxy = await proxy(plainUrl());
    const localProxy = await proxy(plainUrl());
    host = await RunHost.start();
    const files = new Files();
    host.begin([files.file(storyboard, hostProxy.url)], 1);
    const { run, openLocal } = worker(storyboard, localProxy.url);

    const s1 = await run.settle('p', 's1');
    expect(run.ranBefore('p', 's1')).toEqual([]);
    // s2 and s3 are left to no test (a filtered-out step): s4's `before` hands them over, never s1 again.
    const s4 = await run.settle('p', 's4');
    expect(run.ranBefore('p', 's4').map(brief)).toEqual(['s2:failed', 's3:passed']);
    expect(run.ranBefore('p', 's4', (_phase, step) => step !== 's2').map(brief)).toEqual(['s3:passed']);

    const hostRun = files.runs.get(storyboard.file)!;
    await files.endOf(storyboard);
    expect(s1).toEqual(await hostRun.settle('p', 's1'));
    expect(s4).toEqual(await hostRun.settle('p', 's4'));
    expect(run.ranBefore('p', 's4')).toEqual([await hostRun.settle('p', 's2'), await hostRun.settle('p', 's3')]);
    expect([s1, s4].map(brief)).toEqual(['s1:passed', 's4:passed']);
    expect(run.secrets()).toEqual(hostRun.secrets());
    expect(run.secrets()).toContain(HOST_TOKEN);
    expect(run.secrets()).not.toContain(LOCAL_TOKEN);

    // Every call was the host's: the worker never ran a step.
    expect(openLocal).not.toHaveBeenCalled();
    expect(hostProxy.toolCalls()).toHaveLength(4);
    expect(localProxy.toolCalls()).toEqual([]);
    await run.close();
  });

  it('gives each step test its timeout without opening a run of its own: the bound a local run would say, computed once', async () => {
    const storyboard = storyboardOf('bound', ['pass', 'pass', 'pass']);
    host = await RunHost.start();
    const { run, openLocal, settleBound } = worker(storyboard, plainUrl());
    // Asked at collection, once per step test and for the file's afterAll, before any settle.
    const bounds = [1, 2, 3, 4].map(() => run.worstCaseMs());
    expect(new Set(bounds).size).toBe(1);
    expect(settleBound).toHaveBeenCalledTimes(1);
    expect(openLocal).not.toHaveBeenCalled();
    expect(bounds[0]).toBe(openRun(storyboard, plainUrl(), LOCAL_TOKEN).worstCaseMs());
    await run.close();
  });

  // Issue 31 item 10: a worker that could not reach the host ran the file itself, while the host, which runs its
  // files ahead of their tests, had already sent the same steps: the agent got each step twice.
  it('never runs a file itself when the host cannot be reached: the step fails, and the agent is not called again', async () => {
    const storyboard = storyboardOf('unreachable', ['pass', 'pass']);
    const hostProxy = await proxy(plainUrl());
    const localProxy = await proxy(plainUrl());
    host = await RunHost.start();
    const files = new Files();
    host.begin([files.file(storyboard, hostProxy.url)], 1);
    await files.endOf(storyboard);
    expect(hostProxy.toolCalls()).toHaveLength(2);

    const openLocal = vi.fn(() => openRun(storyboard, localProxy.url, LOCAL_TOKEN));
    const gone = { ...host.config, url: `http://127.0.0.1:${await closedPort()}` };
    const run = new HostedRun(gone, storyboard, openLocal, () =>
      settleBoundOf(storyboard, { agentUrl: localProxy.url, timeoutMs: 10_000 }, { env: {} }),
    );
    await expect(run.settle('p', 's1')).rejects.toThrow(
      /^vitest-adcp's run host \(the Vitest main process\) cannot be reached: .+\. The step is not run here: the host may already have sent this storyboard's steps to the agent, and running them again would call the agent twice$/,
    );
    await expect(run.settle('p', 's2')).rejects.toThrow(/cannot be reached/);
    expect(openLocal).not.toHaveBeenCalled();
    expect(localProxy.toolCalls()).toEqual([]);
    expect(hostProxy.toolCalls()).toHaveLength(2);
    await run.close();
  });

  it('reads every step of a run that has gone through from one answer, and asks the host no more for that file', async () => {
    const storyboard = storyboardOf('whole', ['pass', 'fail', 'pass', 'pass']);
    const hostProxy = await proxy(plainUrl());
    host = await RunHost.start();
    const files = new Files();
    host.begin([files.file(storyboard, hostProxy.url)], 1);
    await files.endOf(storyboard);
    const hostRun = files.runs.get(storyboard.file)!;
    const { run, openLocal } = worker(storyboard, plainUrl());

    expect(brief(await run.settle('p', 's1'))).toBe('s1:passed');
    // The host is gone: a worker that asked again would fail its step ("cannot be reached").
    await host.close();
    host = undefined;
    expect(await run.settle('p', 's2')).toEqual(await hostRun.settle('p', 's2'));
    // s3 is left to no test: s4's `before` hands it over, as the host's answer would have.
    expect(await run.settle('p', 's4')).toEqual(await hostRun.settle('p', 's4'));
    expect(run.ranBefore('p', 's4')).toEqual([await hostRun.settle('p', 's3')]);
    expect(run.ranBefore('p', 's4', (_phase, step) => step !== 's3')).toEqual([]);
    expect(run.secrets()).toEqual(hostRun.secrets());
    expect(openLocal).not.toHaveBeenCalled();
    expect(hostProxy.toolCalls()).toHaveLength(4);
  });

  it("has a run's outcomes all at once only when every step has its result", async () => {
    const storyboard = storyboardOf('all_outcomes', ['pass', 'fail', 'pass']);
    const agent = await proxy(plainUrl());
    const run = openRun(storyboard, agent.url, HOST_TOKEN);
    try {
      expect(run.allOutcomes()).toBeUndefined();
      await run.settle('p', 's2');
      expect(run.allOutcomes()).toBeUndefined();
      await run.runAll();
      expect(run.allOutcomes()?.map(brief)).toEqual(['s1:passed', 's2:failed', 's3:passed']);
    } finally {
      await run.close();
    }
  });

  it('runs a file the host was not given itself', async () => {
    const given = storyboardOf('given', ['pass']);
    const other = storyboardOf('other', ['pass', 'fail']);
    const hostProxy = await proxy(plainUrl());
    const localProxy = await proxy(plainUrl());
    host = await RunHost.start();
    const files = new Files();
    host.begin([files.file(given, hostProxy.url)], 1);
    const { run, openLocal, opened } = worker(other, localProxy.url);

    expect(brief(await run.settle('p', 's1'))).toBe('s1:passed');
    expect(brief(await run.settle('p', 's2'))).toBe('s2:failed');
    expect(openLocal).toHaveBeenCalledTimes(1);
    expect(run.secrets()).toEqual(opened[0]!.secrets());
    expect(run.secrets()).toContain(LOCAL_TOKEN);
    expect(localProxy.toolCalls()).toHaveLength(2);
    await files.endOf(given);
    expect(hostProxy.toolCalls()).toHaveLength(1);
    expect(files.order).toEqual(['host_given']);
    await run.close();
  });

  it("runs a storyboard itself when it is not the host's (an edited title: another fingerprint)", async () => {
    const storyboard = storyboardOf('edited', ['fail', 'pass']);
    const edited: Storyboard = { ...storyboard, title: 'Edited since its module was compiled' };
    const hostProxy = await proxy(plainUrl());
    const localProxy = await proxy(plainUrl());
    host = await RunHost.start();
    const files = new Files();
    host.begin([files.file(storyboard, hostProxy.url)], 1);
    const { run, openLocal } = worker(edited, localProxy.url);

    expect(brief(await run.settle('p', 's1'))).toBe('s1:failed');
    expect(brief(await run.settle('p', 's2'))).toBe('s2:passed');
    expect(openLocal).toHaveBeenCalledTimes(1);
    expect(localProxy.toolCalls()).toHaveLength(2);
    expect(run.secrets()).toContain(LOCAL_TOKEN);
    await files.endOf(storyboard);
    await run.close();
  });

  it('runs a file itself once an earlier worker released it (POST /release: the host keeps nothing of it)', async () => {
    const storyboard = storyboardOf('released', ['pass', 'pass']);
    const hostProxy = await proxy(plainUrl());
    const localProxy = await proxy(plainUrl());
    host = await RunHost.start();
    const files = new Files();
    host.begin([files.file(storyboard, hostProxy.url)], 1);

    const first = worker(storyboard, localProxy.url);
    expect(brief(await first.run.settle('p', 's2'))).toBe('s2:passed');
    await files.endOf(storyboard);
    await first.run.close();
    expect(first.openLocal).not.toHaveBeenCalled();

    const second = worker(storyboard, localProxy.url);
    expect(brief(await second.run.settle('p', 's1'))).toBe('s1:passed');
    expect(second.openLocal).toHaveBeenCalledTimes(1);
    expect(localProxy.toolCalls()).toHaveLength(1);
    expect(hostProxy.toolCalls()).toHaveLength(2);
    await second.run.close();
  });
});

describe('scheduling', () => {
  it('starts the files in the order given, one at a time with concurrency 1', async () => {
    const storyboards = ['one', 'two', 'three'].map((name) => storyboardOf(name, ['pass', 'pass']));
    host = await RunHost.start();
    const files = new Files();
    host.begin(
      storyboards.map((s) => files.file(s, slowUrl())),
      1,
    );
    for (const s of storyboards) await files.endOf(s);
    expect(files.order).toEqual(['host_one', 'host_two', 'host_three']);
    expect(files.maxInFlight).toBe(1);
  });

  it('starts a queued file a worker asks for next, ahead of the files before it', async () => {
    const storyboards = ['one', 'two', 'three'].map((name) => storyboardOf(name, ['pass', 'pass']));
    host = await RunHost.start();
    const files = new Files();
    host.begin(
      storyboards.map((s) => files.file(s, slowUrl())),
      1,
    );
    // File one is under way (two calls of 300 ms); a worker asks for file three.
    expect(files.order).toEqual(['host_one']);
    const { run, openLocal } = worker(storyboards[2]!, plainUrl());
    expect(brief(await run.settle('p', 's2'))).toBe('s2:passed');
    for (const s of storyboards) await files.endOf(s);
    expect(files.order).toEqual(['host_one', 'host_three', 'host_two']);
    expect(files.maxInFlight).toBe(1);
    expect(openLocal).not.toHaveBeenCalled();
    await run.close();
  });

  it('keeps no more than `concurrency` runs in flight, and starts a file a worker waits for at once, beside them', async () => {
    const storyboards = ['a', 'b', 'c', 'd', 'e'].map((name) => storyboardOf(`n_${name}`, ['pass', 'pass']));
    const agent = await proxy(slowUrl());
    host = await RunHost.start();
    const files = new Files();
    host.begin(
      storyboards.map((s) => files.file(s, agent.url)),
      2,
    );
    expect(files.order).toEqual(['host_n_a', 'host_n_b']);
    const { run } = worker(storyboards[4]!, plainUrl());
    expect(brief(await run.settle('p', 's1'))).toBe('s1:passed');
    for (const s of storyboards) await files.endOf(s);
    // e started beside a and b, which were under way (the workers take the small files first, the host starts the
    // large ones: waiting behind them left the workers idle); c and d then wait for a slot of the two.
    expect(files.order).toEqual(['host_n_a', 'host_n_b', 'host_n_e', 'host_n_c', 'host_n_d']);
    expect(files.maxInFlight).toBe(3);
    expect(agent.maxInFlight('tools/call')).toBe(3);
    expect(agent.toolCalls()).toHaveLength(10);
    await run.close();
  });

  /** A run of three calls and two of one, the second of them queued behind the others at a concurrency of 2. */
  const longShortQueued = (prefix: string) => ({
    long: storyboardOf(`${prefix}_late`, ['pass', 'pass', 'pass']),
    short: storyboardOf(`${prefix}_early`, ['pass']),
    queued: storyboardOf(`${prefix}_queued`, ['pass']),
  });

  it("tells `finished`, once every file's run has ended, when each ended: the short run started beside a long one first", async () => {
    const { long, short, queued } = longShortQueued('ends');
    host = await RunHost.start();
    const files = new Files();
    const finished = vi.fn();
    const begun = performance.now();
    host.begin(
      [long, short, queued].map((s) => files.file(s, slowUrl())),
      2,
      { finished },
    );
    await files.endOf(long);
    await files.endOf(queued);
    await vi.waitFor(() => expect(finished).toHaveBeenCalledTimes(1), { timeout: 5_000, interval: 10 });
    const ends = finished.mock.calls[0]![0] as ReadonlyMap<string, number>;
    expect([...ends.keys()]).toEqual([short.file, queued.file, long.file]);
    // Three calls of 300 ms for the long run; one for the short one, and one after it for the queued one.
    expect(ends.get(short.file)).toBeGreaterThanOrEqual(300);
    expect(ends.get(queued.file)).toBeGreaterThanOrEqual(ends.get(short.file)! + 300);
    expect(ends.get(long.file)).toBeGreaterThanOrEqual(900);
    expect(ends.get(long.file)).toBeLessThanOrEqual(performance.now() - begun);
  });

  // A worker shows next the files whose runs have ended (src/vitest/worker-order.ts): it asks the host which those are.
  it('tells a worker the files whose runs ended (POST /ended), in the order they ended, from the first it has not been told of', async () => {
    const { long, short, queued } = longShortQueued('ended');
    host = await RunHost.start();
    const files = new Files();
    const ended = async (body: unknown) => {
      const answer = await controlRequest(host!.config, 'POST', '/ended', { body });
      expect(answer.status).toBe(200);
      return JSON.parse(answer.bytes.toString('utf8')) as { run: number; files: string[] };
    };
    expect(await ended({})).toEqual({ run: 0, files: [] });
    host.begin(
      [long, short, queued].map((s) => files.file(s, slowUrl())),
      2,
    );
    expect(await ended({})).toEqual({ run: 1, files: [] });
    await files.endOf(short);
    expect(await ended({ run: 1, from: 0 })).toEqual({ run: 1, files: [short.file] });
    await files.endOf(long);
    await files.endOf(queued);
    // From the second on: the worker has been told of the first.
    expect(await ended({ run: 1, from: 1 })).toEqual({ run: 1, files: [queued.file, long.file] });
    // Another run's count (or none, or one that is not a count) starts from the first.
    for (const body of [{ run: 7, from: 2 }, { from: 2 }, { run: 1, from: 'x' }, { run: 1, from: 1.5 }, null])
      expect((await ended(body)).files, JSON.stringify(body)).toEqual([short.file, queued.file, long.file]);
    expect(await ended({ run: 1, from: 3 })).toEqual({ run: 1, files: [] });

    // The next run is another count.
    host.begin([files.file(storyboardOf('ended_again', ['pass']), slowUrl())], 2);
    expect(await ended({ run: 1, from: 3 })).toEqual({ run: 2, files: [] });
  });

  it('tells a worker of no ended run with a concurrency of 1: the files run one at a time in its own order', async () => {
    const one = storyboardOf('alone_one', ['pass']);
    const two = storyboardOf('alone_two', ['pass']);
    host = await RunHost.start();
    const files = new Files();
    host.begin(
      [one, two].map((s) => files.file(s, plainUrl())),
      1,
    );
    await files.endOf(one);
    await files.endOf(two);
    const answer = await controlRequest(host.config, 'POST', '/ended', { body: {} });
    expect(JSON.parse(answer.bytes.toString('utf8'))).toEqual({ run: 1, files: [] });
  });

  it('tells `finished` nothing of a cancelled run, though every file of it has ended', async () => {
    const one = storyboardOf('cancelled_one', ['pass', 'pass', 'pass']);
    const two = storyboardOf('cancelled_two', ['pass', 'pass', 'pass']);
    const agent = await proxy(slowUrl());
    host = await RunHost.start();
    const files = new Files();
    const finished = vi.fn();
    host.begin(
      [one, two].map((s) => files.file(s, agent.url)),
      2,
      { finished },
    );
    await vi.waitFor(() => expect(agent.toolCalls()).toHaveLength(2), { timeout: 5_000, interval: 10 });
    host.cancel();
    await files.endOf(one);
    await files.endOf(two);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(files.order).toEqual(['host_cancelled_one', 'host_cancelled_two']);
    expect(finished).not.toHaveBeenCalled();
  });

  it("has the agent alone from a one-shot arm's directive through the call it is for, and shares it before and after", async () => {
    // A one-shot response-arm directive is for "the next matching operation from the caller's authenticated sandbox
    // account + principal pair" (comply-test-controller-request.json): another run's call in between would take it.
    const arm = loadStoryboard(
      phasedStoryboard(
        [
          {
            id: 'p',
            steps: [
              { id: 'before', task: 'list_creative_formats' },
              {
                id: 'arm',
                task: 'comply_test_controller',
                sample_request: { scenario: 'force_create_media_buy_arm', params: { arm: 'submitted' } },
              },
              { id: 'buy', task: 'create_media_buy' },
              { id: 'after', task: 'list_creative_formats' },
            ],
          },
        ],
        { id: 'host_arm', title: 'Host arm' },
      ),
      '/virtual/run-host/arm.storyboard.yaml',
    );
    if (!arm.ok) throw new Error(arm.diagnostics.map((d) => d.message).join('\n'));
    const others = ['a', 'b'].map((name) => storyboardOf(`shared_${name}`, ['pass', 'pass', 'pass', 'pass', 'pass']));
    const agent = await proxy(slowUrl());
    host = await RunHost.start();
    const files = new Files();
    host.begin(
      [others[0]!, arm.storyboard, others[1]!].map((s) => files.file(s, agent.url)),
      8,
    );
    for (const s of [...others, arm.storyboard]) await files.endOf(s);
    const spans = agent.toolSpans();
    const directive = spans.find((s) => s.scenario === 'force_create_media_buy_arm')!;
    const buy = spans.find((s) => s.tool === 'create_media_buy')!;
    const ownCalls = spans.filter((s) => s.tool === 'list_creative_formats');
    const otherCalls = spans.filter((s) => s.tool === 'get_adcp_capabilities');
    expect(otherCalls).toHaveLength(10);
    // Nothing of the others in flight from the directive to the buy's answer…
    expect(otherCalls.filter((s) => s.start < buy.end && directive.start < s.end)).toEqual([]);
    // …and beside the arm run's other steps.
    for (const own of ownCalls) expect(otherCalls.some((s) => s.start < own.end && own.start < s.end)).toBe(true);
  });

  it('seeds beside the other seeding runs, never beside another step; then shares the agent', async () => {
    const seedingStoryboard = (name: string) => {
      const loaded = loadStoryboard(
        phasedStoryboard(
          [
            {
              id: 'p',
              steps: [
                { id: 's1', task: 'list_creative_formats' },
                { id: 's2', task: 'list_creative_formats' },
              ],
            },
          ],
          {
            id: `host_${name}`,
            title: `Host ${name}`,
            prerequisites: { controller_seeding: true },
            fixtures: {
              products: [{ product_id: `host_${name}`, name: 'Seeded', delivery_type: 'non_guaranteed' }],
              pricing_options: [{ product_id: `host_${name}`, pricing_option_id: 'po', pricing_model: 'cpm' }],
            },
          },
        ),
        `/virtual/run-host/${name}.storyboard.yaml`,
      );
      if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
      return loaded.storyboard;
    };
    const seeding = [seedingStoryboard('seeding_a'), seedingStoryboard('seeding_b')];
    const shared = storyboardOf('beside_seeding', ['pass', 'pass', 'pass', 'pass']);
    const agent = await proxy(slowUrl());
    host = await RunHost.start();
    const files = new Files();
    host.begin(
      [seeding[0]!, shared, seeding[1]!].map((s) => files.file(s, agent.url)),
      8,
    );
    for (const s of [...seeding, shared]) await files.endOf(s);
    const spans = agent.toolSpans();
    const seeds = spans.filter((s) => s.scenario?.startsWith('seed_'));
    const others = spans.filter((s) => !s.scenario?.startsWith('seed_'));
    expect(seeds).toHaveLength(4);
    const overlap = (x: { start: number; end: number }, y: { start: number; end: number }) =>
      x.start < y.end && y.start < x.end;
    // No other call while a seed is in flight (a product listed before its pricing option is seeded)…
    expect(seeds.flatMap((seed) => others.filter((o) => overlap(seed, o)))).toEqual([]);
    // …the two runs' seeds together…
    expect(overlap(seeds[0]!, seeds[1]!) || overlap(seeds[0]!, seeds[2]!)).toBe(true);
    // …and, seeded, their own steps beside the shared run's.
    const own = others.filter((s) => s.tool === 'list_creative_formats');
    const beside = others.filter((s) => s.tool === 'get_adcp_capabilities');
    expect(own.some((o) => beside.some((b) => overlap(o, b)))).toBe(true);
  });

  it('calls no tool from any run while the run is not ready, and closes the runs when it never is', async () => {
    const storyboards = ['a', 'b', 'c'].map((name) => storyboardOf(`gate_${name}`, ['pass', 'pass']));
    const agent = await proxy(plainUrl());
    host = await RunHost.start();
    const files = new Files();
    const listed = () => [...agent.counts('tools/list').values()].reduce((a, b) => a + b, 0);
    // The preflight fails once every run has prepared (not after a fixed delay, which a loaded machine outruns).
    const ready = (async () => {
      await vi.waitFor(() => expect(listed()).toBe(3), { timeout: 10_000, interval: 10 });
      throw new Error('the agent preflight failed');
    })();
    host.begin(
      storyboards.map((s) => files.file(s, agent.url)),
      8,
      { ready },
    );
    for (const s of storyboards) await files.endOf(s);
    expect(files.order).toHaveLength(3);
    expect(files.inFlight).toBe(0);
    expect(agent.toolCalls()).toEqual([]);
    // Each run opened its session and read the tool list meanwhile (StoryboardRun.prepare), so that its first call could
    // go out as soon as the run was ready.
    expect(listed()).toBe(3);
  });

  it("a step of a run whose preflight failed fails with the preflight's own line (watch mode's re-run), and nothing is called", async () => {
    const storyboard = storyboardOf('failed_start', ['pass', 'pass']);
    const hostProxy = await proxy(plainUrl());
    const localProxy = await proxy(plainUrl());
    host = await RunHost.start();
    const files = new Files();
    const line =
      'vitest-adcp cannot run the storyboards: the agent command `npm run dev` exited with code 3 before it answered';
    host.begin([files.file(storyboard, hostProxy.url)], 1, { ready: Promise.reject(new ConfigurationError(line)) });
    const { run, openLocal } = worker(storyboard, localProxy.url);
    await expect(run.settle('p', 's1')).rejects.toThrow(new ConfigurationError(line));
    await files.endOf(storyboard);
    expect(openLocal).not.toHaveBeenCalled();
    expect([...hostProxy.toolCalls(), ...localProxy.toolCalls()]).toEqual([]);
  });

  it('prepares a run (session, tool list) once the agent is up, not while agent.start starts it', async () => {
    const storyboard = storyboardOf('agent_up', ['pass']);
    const agent = await proxy(plainUrl());
    host = await RunHost.start();
    const files = new Files();
    let up!: () => void;
    const agentUp = new Promise<void>((resolve) => (up = resolve));
    host.begin([files.file(storyboard, agent.url)], 1, { ready: agentUp, agentUp });
    // The run is opened at once, and the host would prepare it in the promise callbacks that follow (no timer in
    // between): once this turn's callbacks have all run, a prepare not held back by agentUp would have been made.
    expect(files.runs.has(storyboard.file)).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(files.prepared.get(storyboard.file) ?? 0).toBe(0);
    expect(agent.counts('tools/list').size).toBe(0);
    up();
    await files.endOf(storyboard);
    expect(files.prepared.get(storyboard.file)).toBe(1);
    expect(agent.toolCalls()).toHaveLength(1);
  });

  /** A host given a long storyboard and a queued one, one at a time, cancelled once the first call reached the agent. */
  async function cancelledAfterFirstCall(name: string, steps: number, queuedName: string) {
    const long = storyboardOf(
      name,
      Array.from({ length: steps }, (): Kind => 'pass'),
    );
    const queued = storyboardOf(queuedName, ['pass']);
    const agent = await proxy(slowUrl());
    host = await RunHost.start();
    const files = new Files();
    host.begin([files.file(long, agent.url), files.file(queued, agent.url)], 1);
    await vi.waitFor(() => expect(agent.toolCalls()).toHaveLength(1), { timeout: 5_000, interval: 10 });
    host.cancel();
    await files.endOf(long);
    return { long, queued, agent, files };
  }

  it('cancel(): the call under way is aborted (its record says cancelled), no later step or queued file starts, and a settle of a later step fails', async () => {
    const { long, agent, files } = await cancelledAfterFirstCall('halted', 4, 'never');
    expect(agent.toolCalls()).toHaveLength(1);
    const first = await files.runs.get(long.file)!.settle('p', 's1');
    expect(brief(first)).toBe('s1:failed');
    expect(first.result.cancelled).toBe(true);

    const { run, openLocal } = worker(long, plainUrl());
    await expect(run.settle('p', 's4')).rejects.toThrow(/answered 410 .*cancelled before this step ran/);
    expect(openLocal).not.toHaveBeenCalled();
    // The queued file never starts.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(files.order).toEqual(['host_halted']);
    expect(agent.toolCalls()).toHaveLength(1);
    await run.close();
  });

  // After cancel() the queued job is still in the table as `queued`: a worker's /settle for it must not start it.
  it('cancel(): a worker asking for a queued file afterwards does not start it, and its settle ends', async () => {
    const { queued, agent, files } = await cancelledAfterFirstCall('halted_ask', 3, 'never_asked');

    const late = worker(queued, plainUrl());
    // Whatever it answers (cancelled, or the worker's own run), it answers: not the host's run of the file.
    await late.run.settle('p', 's1').catch(() => undefined);
    expect(files.order).toEqual(['host_halted_ask']);
    expect(agent.toolCalls()).toHaveLength(1);
    await late.run.close();
  }, 10_000);
});

describe('the control endpoint', () => {
  it('refuses a request without the token, or with another one (401)', async () => {
    const storyboard = storyboardOf('token', ['pass']);
    host = await RunHost.start();
    const files = new Files();
    host.begin([files.file(storyboard, plainUrl())], 1);
    const body = JSON.stringify({ file: storyboard.file, fingerprint: 'x', phase_id: 'p', step_id: 's1', have: [] });
    const bare = await request(`${host.config.url}/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(bare.statusCode).toBe(401);
    expect(await bare.body.json()).toEqual({ error: 'unauthorised' });
    const wrong = await request(`${host.config.url}/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${'0'.repeat(64)}` },
      body,
    });
    expect(wrong.statusCode).toBe(401);
    await wrong.body.dump();
    const release = await request(`${host.config.url}/release`, { method: 'POST', body: '{}' });
    expect(release.statusCode).toBe(401);
    await release.body.dump();
    // With it: the host answers (here a 409: the fingerprint is not the storyboard's).
    const authorised = await request(`${host.config.url}/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${host.config.token}` },
      body,
    });
    expect(authorised.statusCode).toBe(409);
    await authorised.body.dump();
    await files.endOf(storyboard);
  });
});
