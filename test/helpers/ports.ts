import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on, for "the agent cannot be reached" — or for a child the test starts to listen on.
 *
 * Not a port the kernel handed out (bind to 0, release): every server of the suite's four workers and their children
 * listens on port 0, and the kernel may give the released port to one of them a moment later; a test expecting a
 * refused connection then met another test's agent (a 401 where "did not answer" was due). The ports here come from
 * below the kernel's ephemeral range, which it never hands out, in a slice of their own per Vitest worker
 * (VITEST_POOL_ID) walked in turn, so no two workers and no two tests of one worker name the same port; each is checked
 * free by binding it.
 */
export async function closedPort(): Promise<number> {
  for (let tries = 0; tries < SLICE; tries++) {
    const port = sliceStart + (next++ % SLICE);
    if (await free(port)) return port;
  }
  throw new Error(`closedPort: no free port in ${sliceStart}–${sliceStart + SLICE - 1}`);
}

/** Ports per worker: 16 workers fit below 32768 from 16384. */
const SLICE = 1000;
const FIRST = 16_384;

/** The lowest port the kernel hands out to `listen(0)` (Linux; 32768 when unknown, its default). */
function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}

function worker(): number {
  const pool = Number(process.env.VITEST_POOL_ID);
  return Number.isInteger(pool) && pool > 0 ? pool - 1 : process.pid;
}

const slices = Math.max(1, Math.floor((ephemeralLow() - FIRST) / SLICE));
const sliceStart = FIRST + (worker() % slices) * SLICE;
/** Where this worker starts its walk: not always at its slice's first port, so a rerun soon after does not meet a port still closing. */
let next = Math.floor(Math.random() * SLICE);

function free(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
