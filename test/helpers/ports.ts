import { createServer } from 'node:net';

/** A loopback port nothing listens on (bound, then released), for "the agent cannot be reached". */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}
