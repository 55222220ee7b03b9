/**
 * boundedFetch (src/transport/http.ts), the `fetch` every transport uses, against a real HTTP server on 127.0.0.1:
 * what undici's `fetch` did for us before it was built on `request` — decoded content-encoding, null bodies, the
 * request as sent — and the bounds it adds (size after decoding, declared length, error bodies kept).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedFetch, ResponseTooLargeError, type ObservedHttp } from '../../src/transport/http.js';

type Route = (req: IncomingMessage, body: string, res: ServerResponse) => void;
const routes = new Map<string, Route>();
let server: Server;
let origin: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => (routes.get(req.url!) ?? ((_, __, r) => r.writeHead(404).end()))(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const answer = { jsonrpc: '2.0', id: 1, result: { ok: true, text: 'x'.repeat(4_000) } };

describe('boundedFetch', () => {
  it('sends the method, headers (Headers, pairs or a record) and body as given, with Accept-Encoding as fetch sends it', async () => {
    let seen: { method?: string; headers?: IncomingMessage['headers']; body?: string } = {};
    routes.set('/echo', (req, body, res) => {
      seen = { method: req.method, headers: req.headers, body };
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    const fetch = boundedFetch({ timeoutMs: 5_000, maxResponseBytes: 1024 });
    await (
      await fetch(`${origin}/echo`, {
        method: 'POST',
        headers: new Headers({ 'content-type': 'application/json', authorization: 'Bearer t' }),
        body: '{"a":1}',
      })
    ).text();
    expect(seen).toMatchObject({
      method: 'POST',
      body: '{"a":1}',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer t',
        'accept-encoding': 'gzip, deflate, br',
      },
    });
    await (
      await fetch(`${origin}/echo`, {
        method: 'POST',
        headers: [['x-one', '1']],
        body: new TextEncoder().encode('bytes'),
      })
    ).text();
    expect(seen).toMatchObject({ body: 'bytes', headers: { 'x-one': '1' } });
    await (await fetch(`${origin}/echo`, { headers: { 'accept-encoding': 'identity' } })).text();
    expect(seen).toMatchObject({ method: 'GET', headers: { 'accept-encoding': 'identity' } });
  });

  it('decodes gzip and br answers, and reports the status and headers as they arrived', async () => {
    const json = JSON.stringify(answer);
    routes.set('/gzip', (_, __, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-seen': 'a' })
        .end(gzipSync(json)),
    );
    routes.set('/br', (_, __, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' })
        .end(brotliCompressSync(json)),
    );
    let observed: ObservedHttp | undefined;
    const fetch = boundedFetch({ timeoutMs: 5_000, maxResponseBytes: 1024 * 1024, onResponse: (o) => (observed = o) });
    const gz = await fetch(`${origin}/gzip`);
    expect(await gz.json()).toEqual(answer);
    expect(observed).toMatchObject({ status: 200, method: 'GET', url: `${origin}/gzip` });
    expect(observed!.headers).toEqual(
      expect.arrayContaining([
        ['x-seen', 'a'],
        ['content-type', 'application/json'],
      ]),
    );
    expect(await (await fetch(`${origin}/br`)).json()).toEqual(answer);
    routes.set('/unknown', (_, __, res) =>
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'x-made-up' }).end('??'),
    );
    await expect(fetch(`${origin}/unknown`)).rejects.toThrow(
      /content-encoding "x-made-up", which the runner does not decode/,
    );
  });

  it('counts the decoded bytes against the limit, and refuses a declared length over it before reading', async () => {
    routes.set('/inflates', (_, __, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
        .end(gzipSync('x'.repeat(200_000))),
    );
    routes.set('/declared', (_, __, res) =>
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5000' }).end('y'.repeat(5000)),
    );
    const fetch = boundedFetch({ timeoutMs: 5_000, maxResponseBytes: 4096 });
    await expect((await fetch(`${origin}/inflates`)).text()).rejects.toThrow(ResponseTooLargeError);
    await expect(fetch(`${origin}/declared`)).rejects.toThrow(/exceeded 4096 bytes/);
  });

  it('hands a streamed body on as it arrives, tells onTooLarge past the limit, and a reader that cancels closes the connection', async () => {
    let closed!: Promise<void>;
    let more!: () => void;
    routes.set('/stream', (_, __, res) => {
      closed = new Promise((resolve) => res.on('close', () => resolve()));
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: first\n\n');
      more = () => res.write('x'.repeat(5_000));
    });
    const tooLarge: ResponseTooLargeError[] = [];
    const fetch = boundedFetch({ timeoutMs: 5_000, maxResponseBytes: 4096, onTooLarge: (e) => tooLarge.push(e) });
    // The first event while the answer is still open: nothing waits for its end.
    const reader = (await fetch(`${origin}/stream`)).body!.getReader();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe('event: first\n\n');
    more();
    await expect(reader.read()).rejects.toThrow(ResponseTooLargeError);
    expect(tooLarge).toHaveLength(1);
    await closed;
    const reader2 = (await fetch(`${origin}/stream`)).body!.getReader();
    await reader2.read();
    await reader2.cancel();
    await closed;
  });

  it("keeps an error answer's body for the record, and gives null-body statuses a null body", async () => {
    routes.set('/401', (_, __, res) =>
      res
        .writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' })
        .end('{"error":"invalid_token"}'),
    );
    routes.set('/204', (_, __, res) => res.writeHead(204).end());
    let observed: ObservedHttp | undefined;
    const fetch = boundedFetch({ timeoutMs: 5_000, maxResponseBytes: 4096, onResponse: (o) => (observed = o) });
    const refused = await fetch(`${origin}/401`, { method: 'POST', body: '{}' });
    expect(refused.status).toBe(401);
    expect(await refused.text()).toBe('{"error":"invalid_token"}');
    expect(observed).toMatchObject({ status: 401, errorBody: '{"error":"invalid_token"}' });
    const empty = await fetch(`${origin}/204`);
    expect([empty.status, empty.body]).toEqual([204, null]);
  });

  it("gives up at its timeout, headers or body, and honours the caller's abort signal", async () => {
    routes.set('/hang', () => {});
    routes.set('/trickle', (_, __, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {}\n\n');
    });
    const fetch = boundedFetch({ timeoutMs: 300, maxResponseBytes: 4096 });
    await expect(fetch(`${origin}/hang`)).rejects.toThrow();
    const trickling = await fetch(`${origin}/trickle`);
    await expect(trickling.text()).rejects.toThrow();
    const caller = new AbortController();
    const pending = boundedFetch({ timeoutMs: 5_000, maxResponseBytes: 4096 })(`${origin}/hang`, {
      signal: caller.signal,
    });
    caller.abort();
    await expect(pending).rejects.toThrow();
  });
});
