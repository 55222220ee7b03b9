/**
 * A delaying HTTP proxy for the speed bench's latency mode (bench/speed.mjs --latency): it stands in for the
 * network between a runner and an agent on 127.0.0.1. Every request is held `delayMs` after it arrives (its body is
 * read meanwhile), then forwarded to the agent; the answer is passed back as it comes, chunk by chunk, so MCP
 * Streamable HTTP (SSE) answers and long-lived GET streams go through intact. One delay per request/answer pair,
 * as a round trip costs once.
 *
 * It counts: every request is recorded (arrival, end of answer, HTTP method, path, status, `mcp-session-id`, and for a
 * JSON-RPC body its method and tool name); `take()` hands the records since the last `take()` over, which the bench
 * calls after each run. The Host header is passed through unchanged (the agent sees the proxy's address, as it would
 * see its public name behind a load balancer).
 *
 *   const proxy = await startDelayProxy({ target: 'http://127.0.0.1:4100' });
 *   proxy.setDelay(50); … run against `${proxy.origin}/mcp` … const records = proxy.take();
 *   await proxy.close();
 */
import http from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
]);

/**
 * @typedef {object} ProxyRecord
 * @property {number} start   ms (performance.now()) when the request arrived
 * @property {number} end     ms when its answer ended (or failed)
 * @property {string} method  HTTP method
 * @property {string} path
 * @property {number} status  the agent's status (502: the agent could not be reached; 0: the client went away first)
 * @property {string} [session] mcp-session-id of the request
 * @property {string} [rpc]   JSON-RPC method (`tools/call`, `initialize`, …; a batch: methods joined by `,`)
 * @property {string} [tool]  `params.name` of a tools/call
 * @property {boolean} [rateLimited]  a tools/call answered 429, or with `RATE_LIMITED` in its body (plain or as the
 *   escaped JSON of an MCP text content): the agent refused it for its rate
 */

/**
 * @param {{ target: string, delayMs?: number }} options  target: the agent's origin, e.g. http://127.0.0.1:4100
 */
export async function startDelayProxy({ target, delayMs = 0 }) {
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  let delay = delayMs;
  /** @type {ProxyRecord[]} */
  let records = [];

  const server = http.createServer((req, res) => {
    const record = { start: performance.now(), end: 0, method: req.method ?? 'GET', path: req.url ?? '/', status: 0 };
    if (typeof req.headers['mcp-session-id'] === 'string') record.session = req.headers['mcp-session-id'];
    records.push(record);
    const chunks = [];
    let bodyDone = false;
    let held = false;
    let gone = false;
    const finish = (status) => {
      if (!record.end) {
        record.end = performance.now();
        if (!record.status) record.status = status;
      }
    };
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      bodyDone = true;
      if (held) forward();
    });
    res.on('close', () => {
      gone = !res.writableFinished;
      finish(0);
    });
    setTimeout(() => {
      held = true;
      if (bodyDone) forward();
    }, delay);

    function forward(retried = false) {
      if (gone) return;
      const body = Buffer.concat(chunks);
      describeRpc(record, req.headers['content-type'], body);
      const headers = {};
      for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value;
      if (body.length > 0 || 'content-length' in req.headers) headers['content-length'] = String(body.length);
      const out = http.request(
        {
          protocol: upstream.protocol,
          hostname: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers,
          agent,
        },
        (answer) => {
          record.status = answer.statusCode ?? 0;
          const back = {};
          for (const [name, value] of Object.entries(answer.headers))
            if (!HOP_BY_HOP.has(name) && value !== undefined) back[name] = value;
          res.writeHead(answer.statusCode ?? 502, answer.statusMessage, back);
          res.flushHeaders(); // an SSE answer's headers go out before its first event
          if (record.status === 429) record.rateLimited = true;
          // A tools/call answer's body is looked through for RATE_LIMITED (the chunks' seams too: a tail is kept).
          let seam = '';
          answer.on('data', (chunk) => {
            if (record.rpc?.includes('tools/call') && !record.rateLimited) {
              const text = seam + chunk.toString('latin1');
              if (text.includes('RATE_LIMITED')) record.rateLimited = true;
              seam = text.slice(-16);
            }
            res.write(chunk);
          });
          answer.on('end', () => {
            finish(record.status);
            res.end();
          });
          answer.on('error', () => res.destroy());
          answer.on('aborted', () => res.destroy());
        },
      );
      out.on('error', (error) => {
        if (res.headersSent) return res.destroy();
        // A pooled connection the agent closed as it idled (its keep-alive timeout) while this request was being
        // written to it: the agent never read the request. Sent once more on a new connection, as Node's documentation
        // of `agent.keepAlive` advises (`request.reusedSocket`); a 502 here was the proxy's failure, not the agent's.
        if (!retried && out.reusedSocket && error.code === 'ECONNRESET') return forward(true);
        record.status = 502;
        res.writeHead(502, { 'content-type': 'text/plain' });
        // Which connection failed, so that a 502 in a run's record says whether the agent dropped a new one.
        const on = `${out.reusedSocket ? 'a reused' : 'a new'} connection${retried ? ', the request sent again' : ''}`;
        res.end(`delay-proxy: ${error.message} (${on})`);
      });
      // The client went away (a closed SSE stream, a killed run): so does the request to the agent.
      res.on('close', () => {
        if (!res.writableFinished) out.destroy();
      });
      out.end(body);
    }
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    setDelay(ms) {
      delay = ms;
    },
    get delayMs() {
      return delay;
    },
    /** The records since the last take(), oldest first. */
    take() {
      const taken = records;
      records = [];
      return taken;
    },
    async close() {
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

function describeRpc(record, contentType, body) {
  if (record.method !== 'POST' || body.length === 0 || !/json/i.test(String(contentType ?? ''))) return;
  try {
    const message = JSON.parse(body.toString('utf8'));
    const messages = Array.isArray(message) ? message : [message];
    record.rpc = messages
      .map((m) => m?.method ?? (m?.result !== undefined || m?.error !== undefined ? 'response' : '?'))
      .join(',');
    const tool = messages.find((m) => m?.method === 'tools/call')?.params?.name;
    if (typeof tool === 'string') record.tool = tool;
  } catch {
    // not JSON-RPC (an A2A REST call, say): counted all the same
  }
}

/** A summary of a run's records: requests, by kind, the MCP sessions seen. */
export function summarize(records) {
  const sessions = new Set(records.map((r) => r.session).filter(Boolean));
  const byKind = {};
  for (const r of records) {
    const kind = r.tool ?? r.rpc ?? `${r.method} ${r.path}`;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
  }
  return {
    requests: records.length,
    posts: records.filter((r) => r.method === 'POST').length,
    sessions: sessions.size,
    failed: records.filter((r) => r.status >= 500 || r.status === 0).length,
    byKind,
  };
}
