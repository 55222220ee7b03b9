/**
 * Issue 20, cases 1–3: what a hostile agent (and a hostile storyboard title) can make us print or write.
 *
 * 1. The capability check of `npx vitest-adcp <url>` (its default, before any step): an agent that declares the
 *    `Authorization` header it received, an ESC sequence and a forged workflow command as specialisms; another that
 *    fails the capability call with them. stderr and the whole cache directory must hold neither the token nor a raw
 *    control character nor a line a CI log parser reads as a command.
 * 2. GitHub workflow-command injection: an `adcp_error` message and a compared field value with `\n::add-mask::…` and
 *    `\n::error title=…::…`, and a storyboard title with the same and a raw ESC.
 * 3. Encoded credentials: the agent echoes the `Basic base64(user:pass)` header we built and the bearer token, raw,
 *    JSON-escaped and `\u`-escaped inside JSON text content.
 *
 * The agent is a small MCP server of this file (node:http, JSON answers, no session), on 127.0.0.1; cases 2 and 3 run
 * over A2A too, against the same server's A2A face (an agent card, `message/send` answered with a failed Task whose
 * text carries the forged commands and the echoed Basic header, and a completed one with the bearer in a field).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtModule } from '../helpers/built.js';
import { buildBin, repoRoot, runNode, runVitest, type NodeRun, type VitestRun } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `hostile-output-${process.pid}`);
const cliJs = join(scratch, 'dist', 'cli.js');

/** The operator's token: with `"` and `\`, so its JSON-escaped spellings differ from it. */
const TOKEN = `op-"tok\\en-${randomBytes(8).toString('hex')}`;
const BASIC = { username: 'kit-user', password: `kit-pass-${randomBytes(8).toString('hex')}` };
const BASIC_B64 = Buffer.from(`${BASIC.username}:${BASIC.password}`).toString('base64');
const FORGED = '::error title=forged::pwned';
const MASK = '::add-mask::x';

type Mode = 'declare' | 'fail' | 'echo';

interface HostileAgent {
  url: string;
  /** Every Authorization header it received. */
  received: string[];
  close(): Promise<void>;
}

/** `\u`-escapes every character of `text` (as JSON may spell it). */
const uEscaped = (text: string) => [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

function startAgent(mode: Mode): Promise<HostileAgent> {
  const received: string[] = [];
  const server: Server = createServer(async (req, res) => {
    if (req.url?.startsWith('/a2a')) return a2a(req, res, received);
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const auth = String(req.headers.authorization ?? '');
    if (auth) received.push(auth);
    const message = JSON.parse(await body(req)) as {
      id?: number;
      method: string;
      params?: { name?: string; protocolVersion?: string };
    };
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    const answer = (result: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    };
    const hostile = `${auth}\n${FORGED}\n  ${MASK}\n\u001b[2J\u009b31m\u202eevil`;
    switch (message.method) {
      case 'initialize':
        return answer({
          protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'hostile-output', version: '1.0.0' },
        });
      case 'tools/list':
        return answer({
          tools: ['get_adcp_capabilities', 'get_products'].map((name) => ({ name, inputSchema: { type: 'object' } })),
        });
      case 'tools/call': {
        if (mode === 'fail') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: `denied: ${hostile}` } }),
          );
          return;
        }
        if (mode === 'declare') {
          const data = {
            adcp: { major_versions: [3] },
            supported_protocols: ['media_buy'],
            specialisms: [auth, '\u001b[2J', `x\n${FORGED}`, `\u009b2J${MASK}`],
          };
          return answer({ structuredContent: data, content: [{ type: 'text', text: JSON.stringify(data) }] });
        }
        // echo: an adcp_error for get_products (the Basic header), a field value for get_adcp_capabilities (the bearer).
        if (message.params?.name === 'get_products') {
          const error = { code: 'INVALID_REQUEST', message: `denied\n${MASK}\n${FORGED} ${hostile}` };
          const text = JSON.stringify({ adcp_error: { ...error, echoed: 'AUTH' } }).replace('AUTH', uEscaped(auth));
          return answer({ isError: true, structuredContent: { adcp_error: error }, content: [{ type: 'text', text }] });
        }
        const data = {
          adcp: { major_versions: [3] },
          supported_protocols: ['media_buy'],
          note: `x\n${FORGED}\n${auth}`,
        };
        const text = JSON.stringify({ ...data, note: 'NOTE' }).replace('"NOTE"', `"${uEscaped(data.note)}"`);
        return answer({ structuredContent: data, content: [{ type: 'text', text }] });
      }
      default:
        return answer({});
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/mcp`,
        received,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    }),
  );
}

/** The A2A face of the echo agent: its card, and message/send answered with the same hostile text as over MCP. */
async function a2a(req: IncomingMessage, res: import('node:http').ServerResponse, received: string[]): Promise<void> {
  const { port } = req.socket.address() as AddressInfo;
  if (req.method === 'GET' && req.url === '/a2a/.well-known/agent-card.json') {
    const card = {
      protocolVersion: '0.3.0',
      name: 'hostile-output',
      description: 'x',
      url: `http://127.0.0.1:${port}/a2a`,
      preferredTransport: 'JSONRPC',
      version: '1.0.0',
      capabilities: {},
      defaultInputModes: ['application/json'],
      defaultOutputModes: ['application/json'],
      skills: ['get_adcp_capabilities', 'get_products'].map((id) => ({ id, name: id, description: id, tags: [] })),
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(404).end();
    return;
  }
  const auth = String(req.headers.authorization ?? '');
  if (auth) received.push(auth);
  const message = JSON.parse(await body(req)) as {
    id: number;
    params?: { message?: { parts?: { data?: { skill?: string } }[] } };
  };
  const skill = message.params?.message?.parts?.find((p) => p.data)?.data?.skill;
  const hostile = `${auth}\n${FORGED}\n  ${MASK}\n\u001b[2J\u009b31m\u202eevil`;
  const task = (state: string, extra: Record<string, unknown>) => ({
    kind: 'task',
    id: `t-${randomBytes(4).toString('hex')}`,
    contextId: 'c1',
    status: { state, timestamp: new Date().toISOString() },
    ...extra,
  });
  const result =
    skill === 'get_products'
      ? // A failed Task whose only words are text: the agent's message, forged commands and the echoed Basic header.
        task('failed', {
          artifacts: [{ artifactId: 'a1', parts: [{ kind: 'text', text: `denied\n${MASK}\n${FORGED} ${hostile}` }] }],
        })
      : task('completed', {
          artifacts: [
            {
              artifactId: 'a1',
              parts: [
                {
                  kind: 'data',
                  data: {
                    adcp: { major_versions: [3] },
                    supported_protocols: ['media_buy'],
                    note: `x\n${FORGED}\n${auth}`,
                  },
                },
              ],
            },
          ],
        });
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Every file below `dir`, read as text. */
function filesUnder(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(d, name);
      const stat = statSync(path, { throwIfNoEntry: false });
      if (stat?.isDirectory()) walk(path);
      else if (stat?.isFile()) out.push({ file: path, text: readFileSync(path, 'utf8') });
    }
  };
  walk(dir);
  return out;
}

/** Lines a CI log parser reads as a command: `::` after leading whitespace (GitHub), `##[` / `##vso[` (Azure). */
function commandLines(text: string): string[] {
  return text.split(/\r?\n/).filter((line) => /^\s*::/.test(line) || /##(\[|vso\[)/i.test(line));
}

const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Every spelling of a secret an output could carry it in. */
function spellings(secret: string): string[] {
  const once = JSON.stringify(secret).slice(1, -1);
  return [
    secret,
    once,
    JSON.stringify(once).slice(1, -1),
    encodeURIComponent(secret),
    uEscaped(secret),
    JSON.stringify(uEscaped(secret)).slice(1, -1),
  ];
}

function expectClean(name: string, text: string, secrets: string[]): void {
  for (const secret of secrets)
    for (const form of spellings(secret))
      expect(text.includes(form), `${name} holds a spelling of a secret: ${form}`).toBe(false);
  expect(commandLines(text), `${name} has lines a CI log parser reads as commands`).toEqual([]);
  expect(RAW_CONTROL.exec(text)?.[0], `${name} holds a raw control character`).toBeUndefined();
}

beforeAll(async () => {
  await buildBin(scratch);
}, 120_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('case 1: the capability check of the bin', () => {
  /** The bin in a project directory of its own (its caches below it, and the user cache dir redirected there too). */
  async function bin(project: string, url: string): Promise<NodeRun> {
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'package.json'), '{ "name": "hostile-output-project", "private": true }\n');
    return runNode([cliJs, url, '--auth', TOKEN, '--list'], {
      cwd: project,
      env: {
        ADCP_AGENT_URL: undefined,
        ADCP_AUTH_TOKEN: undefined,
        ADCP_PROTOCOL: undefined,
        ADCP_COMPLIANCE: undefined,
        XDG_CACHE_HOME: join(project, 'xdg'),
        HOME: join(project, 'home'),
      },
      timeoutMs: 60_000,
    });
  }

  it('an agent that declares its Authorization header, ESC and a forged command: stderr, stdout and every file the bin writes are clean', async () => {
    const agent = await startAgent('declare');
    const project = join(scratch, 'declare');
    try {
      const run = await bin(project, agent.url);
      expect(agent.received).toContain(`Bearer ${TOKEN}`);
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      // The warnings are still there, the agent's text in them shown as text.
      expect(run.stderr).toContain('the agent declares specialism');
      expect(run.stderr).toContain('\\u{1b}[2J');
      expect(run.stderr).toContain('[redacted]');
      expectClean('stderr', run.stderr, [TOKEN]);
      expectClean('stdout', run.stdout, [TOKEN]);
      for (const { file, text } of filesUnder(project)) expectClean(file, text, [TOKEN]);
    } finally {
      await agent.close();
    }
  }, 150_000);

  it('an agent that fails the capability call with them: the message is clean', async () => {
    const agent = await startAgent('fail');
    const project = join(scratch, 'fail');
    try {
      const run = await bin(project, agent.url);
      expect(agent.received).toContain(`Bearer ${TOKEN}`);
      expect(run.stderr).toContain('denied');
      expectClean('stderr', run.stderr, [TOKEN]);
      expectClean('stdout', run.stdout, [TOKEN]);
      for (const { file, text } of filesUnder(project)) expectClean(file, text, [TOKEN]);
    } finally {
      await agent.close();
    }
  }, 90_000);
});

describe.each(['mcp', 'a2a'] as const)(
  'cases 2 and 3 over %s: a run whose agent forges workflow commands and echoes every credential it got',
  (protocol) => {
    let agent: HostileAgent;
    let run: VitestRun;
    const runDir = join(scratch, `run-${protocol}`);
    const files = {
      junit: join(runDir, 'junit.xml'),
      report: join(runDir, 'report.json'),
      markdown: join(runDir, 'summary.md'),
      html: join(runDir, 'report.html'),
      ndjson: join(runDir, 'report.ndjson'),
      jobSummary: join(runDir, 'job-summary.md'),
    };
    let outputs: Record<string, string>;

    beforeAll(async () => {
      agent = await startAgent('echo');
      const dir = runDir;
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, 'kit.yaml'),
        `auth:\n  basic:\n    username: "${BASIC.username}"\n    password: "${BASIC.password}"\n`,
      );
      writeFileSync(
        join(dir, 'forged.storyboard.yaml'),
        [
          'id: hostile_output',
          'version: "1.0.0"',
          // A raw ESC and a forged command in the title, which becomes the test name.
          `title: "Forged \\e[2J title\\n${FORGED}"`,
          'track: core',
          'prerequisites:',
          '  test_kit: "./kit.yaml"',
          'phases:',
          '  - id: calls',
          `    title: "Calls\\n${MASK}"`,
          '    steps:',
          '      - id: basic_echo',
          '        title: "The agent echoes the Basic header in an adcp_error"',
          '        task: get_products',
          '        stateful: false',
          '        auth: { type: basic, from_test_kit: true }',
          '        sample_request: { buying_mode: brief, brief: "coffee" }',
          '        validations:',
          '          - check: field_present',
          '            path: products',
          '      - id: field_echo',
          '        title: "The agent echoes the bearer in a compared field"',
          '        task: get_adcp_capabilities',
          '        stateful: false',
          '        validations:',
          '          - check: field_value',
          '            path: note',
          '            value: "fine"',
          '',
        ].join('\n'),
      );
      run = await runVitest({
        config: join(repoRoot, 'test', 'e2e', 'hostile.config.ts'),
        env: {
          ADCP_AGENT_URL: protocol === 'a2a' ? agent.url.replace(/\/mcp$/, '/a2a') : agent.url,
          ADCP_PROTOCOL: protocol,
          ADCP_AUTH_TOKEN: TOKEN,
          HOSTILE_STORYBOARDS: join(dir, '*.storyboard.yaml'),
          GITHUB_STEP_SUMMARY: files.jobSummary,
        },
        reporters: ['junit', await builtModule('vitest/reporter')],
        args: [
          `--outputFile.junit=${files.junit}`,
          `--outputFile.vitest-adcp=${files.report}`,
          `--outputFile.vitest-adcp-markdown=${files.markdown}`,
          `--outputFile.vitest-adcp-html=${files.html}`,
          `--outputFile.vitest-adcp-ndjson=${files.ndjson}`,
        ],
        timeoutMs: 90_000,
      });
      outputs = { stdout: run.stdout, stderr: run.stderr, meta: JSON.stringify(run.tests) };
      for (const [name, file] of Object.entries(files)) {
        try {
          outputs[name] = readFileSync(file, 'utf8');
        } catch {
          outputs[name] = '';
        }
      }
    }, 120_000);
    afterAll(() => agent?.close());

    it('the agent got the credentials, and exactly the hostile steps fail', () => {
      expect(agent.received).toContain(`Basic ${BASIC_B64}`);
      expect(agent.received).toContain(`Bearer ${TOKEN}`);
      expect(run.tests.map((t) => [t.name.replace(/^.*\(/, '('), t.state]).sort()).toEqual([
        ['(basic_echo)', 'failed'],
        ['(field_echo)', 'failed'],
      ]);
      expect(outputs.junit).toContain('<failure');
      // Every output was written, so the checks below read something.
      for (const name of ['stdout', 'junit', 'report', 'markdown', 'html', 'ndjson', 'jobSummary'])
        expect(outputs[name]!.length, name).toBeGreaterThan(0);
      expect(JSON.parse(outputs.report).summary).toMatchObject({ steps_failed: 2 });
    });

    it('case 2: no output has a line a CI log parser reads as a command, nor a raw control character', () => {
      for (const [name, text] of Object.entries(outputs)) {
        if (name === 'meta') continue; // JSON of Vitest's task objects: checked for secrets only (below)
        expectClean(name, text, []);
      }
      // The forged commands are shown, as text.
      expect(outputs.stdout + outputs.stderr).toContain('\\u{3a}:add-mask::x');
      expect(outputs.stdout + outputs.stderr).toContain('\\u{3a}:error title=forged::pwned');
    });

    it('case 3: no output holds any spelling of a credential the run sent (bearer, Basic base64, the Basic header)', () => {
      for (const [name, text] of Object.entries(outputs)) {
        for (const form of [TOKEN, BASIC.password, BASIC_B64, `Basic ${BASIC_B64}`].flatMap(spellings))
          expect(text.includes(form), `${name} holds a spelling of a secret: ${form}`).toBe(false);
      }
    });

    it('the no-secret-echo invariant sees the echoed Basic header', () => {
      const steps = JSON.parse(outputs.report).storyboards.flatMap((s: any) => s.steps);
      const basic = steps.find((s: any) => s.step_id === 'basic_echo');
      const invariant = basic.validations.find((v: any) => JSON.stringify(v).includes('context.no_secret_echo'));
      expect(invariant, JSON.stringify(basic.validations)).toMatchObject({ passed: false });
    });
  },
);
