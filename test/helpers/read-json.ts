/** A test server's request body as JSON: undefined when it is empty. Typed `any`, as a handler reads what it expects. */
import type { IncomingMessage } from 'node:http';

export async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}
