/**
 * The worker's next file (src/vitest/worker-order.ts): at a file's end, the files whose runs the host has ended move
 * ahead of the others in the worker's list. Against a control endpoint over a real loopback socket that answers
 * `POST /ended` as it is scripted to (the host's side is test/plugin/run-host.test.ts; whole runs,
 * test/e2e/run-host.test.ts), and a worker state of our own: the test's own Vitest worker state is not touched.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ControlServer, type ControlAnswer } from '../../src/transport/control-server.js';
import { endedFirst, showEndedNext, type WorkerState } from '../../src/vitest/worker-order.js';
import { closedPort } from '../helpers/ports.js';

const servers: ControlServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** An endpoint giving the scripted answers in turn (the last one again after them), and the bodies it was sent. */
async function endpoint(...answers: ControlAnswer[]) {
  const asked: unknown[] = [];
  const server = await ControlServer.start(async ({ url, body }) => {
    asked.push({ path: url.pathname, body });
    return answers.length > 1 ? answers.shift()! : answers[0]!;
  });
  servers.push(server);
  return { host: { url: server.url, token: server.token }, asked };
}

const ended = (run: number, files: string[]): ControlAnswer => ({ status: 200, body: { run, files } });

/** A worker state whose list is `files` (paths), at `current`. */
function worker(files: string[], current: string): WorkerState & { ctx: { files: { filepath: string }[] } } {
  return { filepath: current, ctx: { files: files.map((filepath) => ({ filepath, testLocations: undefined })) } };
}
const order = (state: { ctx: { files: { filepath: string }[] } }) => state.ctx.files.map((f) => f.filepath);

describe('endedFirst', () => {
  const files = ['a', 'b', 'c', 'd', 'e'].map((filepath) => ({ filepath }));

  it('puts the ended files first, in the order they ended, and the others after them in their own order', () => {
    const reordered = endedFirst(
      files,
      new Map([
        ['d', 0],
        ['b', 1],
        ['x', 2],
      ]),
    );
    expect(reordered.map((f) => f.filepath)).toEqual(['d', 'b', 'a', 'c', 'e']);
    // The same objects, none added or dropped.
    expect(new Set(reordered)).toEqual(new Set(files));
  });

  it('leaves the list as it is when none of its files has ended', () => {
    expect(endedFirst(files, new Map([['x', 0]]))).toBe(files);
  });
});

describe('showEndedNext', () => {
  it("moves the files after the current one whose runs have ended ahead, and leaves the current one's place and those before it", async () => {
    const { host, asked } = await endpoint(ended(101, ['/s/e.yaml', '/s/a.yaml', '/s/c.yaml']));
    const state = worker(['/s/a.yaml', '/s/b.yaml', '/s/c.yaml', '/s/d.yaml', '/s/e.yaml'], '/s/b.yaml');
    const list = state.ctx.files;
    await showEndedNext(host, state);
    expect(order(state)).toEqual(['/s/a.yaml', '/s/b.yaml', '/s/e.yaml', '/s/c.yaml', '/s/d.yaml']);
    // Vitest iterates this very list: reordered in place.
    expect(state.ctx.files).toBe(list);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ path: '/ended' });
  });

  it('asks only for the runs ended since it last asked, and keeps the order they ended in across asks', async () => {
    const { host, asked } = await endpoint(ended(102, ['/s/d.yaml']), ended(102, ['/s/c.yaml']));
    const state = worker(['/s/a.yaml', '/s/b.yaml', '/s/c.yaml', '/s/d.yaml'], '/s/a.yaml');
    await showEndedNext(host, state);
    expect(order(state)).toEqual(['/s/a.yaml', '/s/d.yaml', '/s/b.yaml', '/s/c.yaml']);
    state.filepath = '/s/d.yaml';
    await showEndedNext(host, state);
    expect(order(state)).toEqual(['/s/a.yaml', '/s/d.yaml', '/s/c.yaml', '/s/b.yaml']);
    // The second ask: run 102's ends from its second on (the first ask's count depends on the runs before it here).
    expect(asked).toHaveLength(2);
    expect((asked[1] as { body: unknown }).body).toEqual({ run: 102, from: 1 });
  });

  it("counts another run's ends from its first (a watch-mode re-run)", async () => {
    const { host, asked } = await endpoint(ended(103, ['/s/x.yaml', '/s/y.yaml']), ended(104, ['/s/c.yaml']));
    await showEndedNext(host, worker(['/s/a.yaml', '/s/b.yaml', '/s/c.yaml'], '/s/a.yaml'));
    const next = worker(['/s/a.yaml', '/s/b.yaml', '/s/c.yaml', '/s/y.yaml'], '/s/a.yaml');
    await showEndedNext(host, next);
    // y ended in run 103, not in this one: only c moves.
    expect(order(next)).toEqual(['/s/a.yaml', '/s/c.yaml', '/s/b.yaml', '/s/y.yaml']);
    expect((asked[1] as { body: unknown }).body).toEqual({ run: 103, from: 2 });
  });

  it('asks nothing with one file or none left after the current one', async () => {
    const { host, asked } = await endpoint(ended(105, ['/s/b.yaml']));
    const state = worker(['/s/a.yaml', '/s/b.yaml'], '/s/a.yaml');
    await showEndedNext(host, state);
    await showEndedNext(host, worker(['/s/a.yaml', '/s/b.yaml'], '/s/b.yaml'));
    expect(order(state)).toEqual(['/s/a.yaml', '/s/b.yaml']);
    expect(asked).toEqual([]);
  });

  it('leaves the order and asks nothing when the worker state is not what it reads (another Vitest, not a worker)', async () => {
    const { host, asked } = await endpoint(ended(106, ['/s/c.yaml']));
    const files = ['/s/a.yaml', '/s/b.yaml', '/s/c.yaml'];
    const states: unknown[] = [
      undefined,
      {},
      { filepath: '/s/a.yaml' },
      { filepath: '/s/a.yaml', ctx: { files: 'no list' } },
      { filepath: 1, ctx: { files: files.map((filepath) => ({ filepath })) } },
      { filepath: '/s/a.yaml', ctx: { files: [...files, '/s/d.yaml'] } },
      { filepath: '/s/a.yaml', ctx: { files: [{ filepath: '/s/a.yaml' }, null, { filepath: '/s/c.yaml' }] } },
      worker(files, '/s/not-in-the-list.yaml'),
    ];
    for (const state of states) await showEndedNext(host, state as WorkerState);
    expect(asked).toEqual([]);
  });

  it('leaves the order as it is, and never throws, when the host cannot be asked or answers what it cannot read', async () => {
    const files = ['/s/a.yaml', '/s/b.yaml', '/s/c.yaml'];
    const gone = { url: `http://127.0.0.1:${await closedPort()}`, token: 'x' };
    const state = worker(files, '/s/a.yaml');
    await showEndedNext(gone, state);
    for (const answer of [
      { status: 500, body: { error: 'down' } },
      { status: 404, body: { error: 'not found' } },
      { status: 200, bytes: Buffer.from('not json') },
      { status: 200, body: { run: '107', files: ['/s/c.yaml'] } },
      { status: 200, body: { run: 107, files: '/s/c.yaml' } },
      { status: 200, body: { run: 107, files: [7] } },
    ] satisfies ControlAnswer[]) {
      const { host } = await endpoint(answer);
      await showEndedNext(host, state);
    }
    const { host } = await endpoint(ended(107, ['/s/c.yaml']));
    await showEndedNext({ ...host, token: 'wrong' }, state);
    expect(order(state)).toEqual(files);
  });
});
