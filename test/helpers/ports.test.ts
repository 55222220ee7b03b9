/**
 * The suite's "nothing listens here" port (ports.ts): outside the range the kernel hands to `listen(0)`, so no other
 * test's server can be given it, and refused when connected to.
 */
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closedPort } from './ports.js';

describe('closedPort', () => {
  it('is below the ephemeral range, refuses connections, and differs from the one before it', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
    const [a, b] = [await closedPort(), await closedPort()];
    expect(a).toBeLessThan(low);
    expect(b).not.toBe(a);
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(a, '127.0.0.1', () => resolve('connected'));
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });

  it('skips a port something listens on', async () => {
    const taken = await closedPort();
    const server = createServer();
    await new Promise<void>((r) => server.listen(taken + 1, '127.0.0.1', r));
    try {
      // The walk goes on from taken + 1, which is in use now: the next port is past it.
      const port = await closedPort();
      expect(port).not.toBe(taken + 1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
