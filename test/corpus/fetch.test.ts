/**
 * Fetching a published AdCP bundle by version (src/corpus/fetch.ts): each test publishes its own small bundle from a
 * loopback HTTP server and fetches it into a per-user cache of its own (XDG_CACHE_HOME, passed as `env`). A bundle is
 * unpacked only when its checksum matches, its signature (when published) verifies, and every entry is a plain file
 * or folder inside `adcp-<version>/`; a cached tree is used only while it is exactly what was unpacked.
 */
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { c as createTar, Header } from 'tar';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { needsFetch, prepareCorpus, resolveCorpus } from '../../src/corpus.js';
import { CorpusFetchError, fetchCorpus, fetchedCorpusRoot, fetchedFrom } from '../../src/corpus/fetch.js';
import { closedPort } from '../helpers/ports.js';

const scratch = mkdtempSync(join(tmpdir(), 'adcp-corpus-fetch-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const dir = join(scratch, `t${n++}`);
  mkdirSync(dir);
  return dir;
};

const V = '9.9.1';
const TOP = `adcp-${V}`;
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** A cache of its own, and no PATH (no real cosign) unless a test gives one. */
function cacheEnv(dir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { XDG_CACHE_HOME: join(dir, 'cache'), PATH: '', ...extra };
}
const corpora = (env: NodeJS.ProcessEnv) => join(env.XDG_CACHE_HOME!, 'vitest-adcp', 'corpora');
/** What the corpora folder holds besides manifests: unpacked trees, or temporary folders left behind. */
const trees = (env: NodeJS.ProcessEnv) =>
  existsSync(corpora(env)) ? readdirSync(corpora(env)).filter((name) => name !== 'manifests') : [];

const TREE: Record<string, string> = {
  'compliance/index.json': JSON.stringify({ adcp_version: V }),
  'compliance/universal/x.yaml': 'id: x\nphases: []\n',
  'schemas/manifest.json': JSON.stringify({ adcp_version: V, tools: {} }),
  'schemas/core/thing.json': JSON.stringify({ $id: `/schemas/${V}/core/thing.json`, type: 'object' }),
  // Published in the real bundles, never unpacked: the runner uses the modular schemas.
  'schemas/bundled/big.json': '{}',
  'skills/README.md': '# skills\n',
};

/** The bundle as a release is made: `tar czf` of a staged tree, with modes the cache must not keep (0600, 0700). */
async function realBundle(dir: string): Promise<Buffer> {
  const stage = join(dir, 'stage');
  for (const [path, text] of Object.entries(TREE)) {
    mkdirSync(join(stage, TOP, path, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(join(stage, TOP, path), text, { mode: 0o600 });
  }
  const file = join(dir, 'bundle.tgz');
  await createTar({ gzip: true, cwd: stage, file }, [TOP]);
  return readFileSync(file);
}

interface Entry {
  path: string;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'FIFO';
  body?: string;
  linkpath?: string;
}

const TREE_ENTRIES: Entry[] = [
  { path: `${TOP}/`, type: 'Directory' },
  ...Object.entries(TREE).map(([path, body]) => ({ path: `${TOP}/${path}`, body })),
];

/** A bundle written header by header (tar's own Header), for entries `tar czf` would never write. */
function craftedBundle(extra: Entry[], base = TREE_ENTRIES): Buffer {
  const blocks = [...base, ...extra].flatMap(({ path, type = 'File', body = '', linkpath }) => {
    const data = Buffer.from(body);
    const header = new Header({ path, type, size: data.length, mode: 0o644, mtime: new Date(0), linkpath });
    header.encode();
    return [header.block!, data, Buffer.alloc((512 - (data.length % 512)) % 512)];
  });
  return gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
}

type Published = Record<string, Buffer | string>;

/** The files of a release: the bundle, its `.sha256` (of `digestOf`), and with `signed` cosign's `.sig` and `.crt`. */
function release(tgz: Buffer, { digestOf = tgz, signed = false }: { digestOf?: Buffer; signed?: boolean } = {}) {
  const files: Published = { [`${V}.tgz`]: tgz, [`${V}.tgz.sha256`]: `${sha256(digestOf)}  ${V}.tgz\n` };
  if (signed) Object.assign(files, { [`${V}.tgz.sig`]: 'MEUCIQ==', [`${V}.tgz.crt`]: 'LS0tLS1CRUdJTg==' });
  return files;
}

const servers: { close: () => Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/**
 * Serves `files` at /protocol/<name> on 127.0.0.1 (a string value starting `redirect:` answers 302 there); `chunked`:
 * without a content-length.
 */
async function serve(
  files: Published,
  { chunked = false } = {},
): Promise<{ base: string; hits: string[]; close: () => Promise<void> }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const name = /^\/(?:protocol|files)\/([^/]+)$/.exec(req.url ?? '')?.[1];
    const body = name === undefined ? undefined : files[name];
    if (typeof body === 'string' && body.startsWith('redirect:')) res.writeHead(302, { location: body.slice(9) }).end();
    else if (body === undefined) res.writeHead(404).end('not found');
    else if (chunked) res.write(body, () => res.end());
    else res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  servers.push({ close });
  return { base: `http://127.0.0.1:${port}`, hits, close };
}

/** The error `promise` rejects with: a CorpusFetchError of one line. */
async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CorpusFetchError);
  const message = (error as Error).message;
  expect(message.split('\n')).toHaveLength(1);
  return message;
}

describe('fetchCorpus: a published bundle', () => {
  it('is downloaded, verified and unpacked (compliance/ and the modular schemas/ only, 0644/0755); later runs need no network', async () => {
    const dir = fresh();
    const env = cacheEnv(dir);
    const server = await serve(release(await realBundle(dir)));
    const lines: string[] = [];
    const got = await fetchCorpus(V, { baseUrl: server.base, env, onProgress: (line) => lines.push(line) });

    const tree = join(corpora(env), TOP);
    expect(got).toEqual({
      root: join(tree, 'compliance'),
      schemasDir: join(tree, 'schemas'),
      version: V,
      fromCache: false,
    });
    expect(readFileSync(join(got.root, 'universal', 'x.yaml'), 'utf8')).toBe(TREE['compliance/universal/x.yaml']);
    expect(existsSync(join(got.schemasDir, 'manifest.json'))).toBe(true);
    expect(existsSync(join(got.schemasDir, 'core', 'thing.json'))).toBe(true);
    expect(existsSync(join(got.schemasDir, 'bundled'))).toBe(false);
    expect(existsSync(join(tree, 'skills'))).toBe(false);
    if (process.platform !== 'win32') {
      expect(statSync(join(got.root, 'universal', 'x.yaml')).mode & 0o777).toBe(0o644);
      expect(statSync(join(got.root, 'universal')).mode & 0o777).toBe(0o755);
    }
    expect(trees(env)).toEqual([TOP]); // no temporary folder left
    const url = `${server.base}/protocol/${V}.tgz`;
    expect(lines).toContain(`[vitest-adcp] fetching AdCP ${V} from ${url}`);
    expect(lines.at(-1)).toMatch(/^\[vitest-adcp\] AdCP 9\.9\.1: .* MB, sha256 verified, 4 files in /);

    expect(fetchedCorpusRoot(V, env)).toBe(got.root);
    expect(fetchedFrom(V, env)).toBe(url);
    await server.close();
    const again = await fetchCorpus(V, { baseUrl: server.base, env });
    expect(again).toEqual({ ...got, fromCache: true });
  });

  it('fetched twice at once: both get the same whole tree', async () => {
    const dir = fresh();
    const env = cacheEnv(dir);
    const server = await serve(release(await realBundle(dir)));
    const [a, b] = await Promise.all([1, 2].map(() => fetchCorpus(V, { baseUrl: server.base, env })));
    expect(a).toEqual(b);
    expect(trees(env)).toEqual([TOP]);
    expect(fetchedCorpusRoot(V, env)).toBe(a!.root);
  });

  it('follows a redirect to the file', async () => {
    const dir = fresh();
    const env = cacheEnv(dir);
    const files = release(await realBundle(dir));
    const server = await serve({
      ...files,
      [`${V}.tgz`]: `redirect:/files/${V}.tar.gz`,
      [`${V}.tar.gz`]: files[`${V}.tgz`]!,
    });
    expect((await fetchCorpus(V, { baseUrl: server.base, env })).fromCache).toBe(false);
    expect(server.hits).toContain(`/files/${V}.tar.gz`);
  });

  it('whose checksum does not match is refused before anything is unpacked', async () => {
    const dir = fresh();
    const env = cacheEnv(dir);
    const tgz = await realBundle(dir);
    const server = await serve(release(tgz, { digestOf: Buffer.from('another bundle') }));
    const message = await refusal(fetchCorpus(V, { baseUrl: server.base, env }));
    expect(message).toContain(`AdCP ${V} from ${server.base}/protocol/${V}.tgz does not match its .sha256`);
    expect(message).toContain(`expected ${sha256('another bundle')}, got ${sha256(tgz)}`);
    expect(trees(env)).toEqual([]);
    expect(fetchedCorpusRoot(V, env)).toBeUndefined();
  });

  it.each<[string, Entry, RegExp]>([
    ['a ".." segment', { path: `${TOP}/compliance/../../evil.txt`, body: 'x' }, /has a "\.\." in its path/],
    ['an absolute path', { path: '/tmp/evil.txt', body: 'x' }, /has an absolute path/],
    [
      'a symlink',
      { path: `${TOP}/compliance/evil.yaml`, type: 'SymbolicLink', linkpath: '/etc/passwd' },
      /is a SymbolicLink/,
    ],
    [
      'a hard link',
      { path: `${TOP}/compliance/evil.yaml`, type: 'Link', linkpath: `${TOP}/compliance/index.json` },
      /is a Link/,
    ],
    ['a FIFO', { path: `${TOP}/compliance/evil`, type: 'FIFO' }, /is a FIFO/],
    [
      'an entry outside the version folder',
      { path: 'adcp-9.9.2/compliance/evil.txt', body: 'x' },
      /lies outside adcp-9\.9\.1\//,
    ],
    ['a name twice', { path: `${TOP}/compliance/universal/X.yaml`, body: 'id: evil\n' }, /appears twice/],
  ])('with %s is refused whole, nothing unpacked', async (_, entry, why) => {
    const dir = fresh();
    const env = cacheEnv(dir);
    const server = await serve(release(craftedBundle([entry])));
    const message = await refusal(fetchCorpus(V, { baseUrl: server.base, env }));
    expect(message).toMatch(why);
    expect(message).toContain(
      `AdCP ${V} from ${server.base}/protocol/${V}.tgz is refused: its entry ${JSON.stringify(entry.path)}`,
    );
    expect(trees(env)).toEqual([]);
    expect(readdirSync(dir, { recursive: true }).filter((path) => String(path).includes('evil'))).toEqual([]);
  });

  it('that is not a bundle (no compliance/index.json) is refused', async () => {
    const dir = fresh();
    const env = cacheEnv(dir);
    const server = await serve(release(craftedBundle([{ path: `${TOP}/schemas/manifest.json`, body: '{}' }], [])));
    expect(await refusal(fetchCorpus(V, { baseUrl: server.base, env }))).toMatch(
      /has no adcp-9\.9\.1\/compliance\/index\.json/,
    );
    expect(trees(env)).toEqual([]);
  });

  it.each([
    ['with', false],
    ['without', true],
  ])('larger than maxBytes is refused (%s a content-length)', async (_, chunked) => {
    const dir = fresh();
    const env = cacheEnv(dir);
    // The length of the very bytes served: two builds differ (file times inside the tar change the gzip size).
    const bundle = await realBundle(dir);
    const server = await serve(release(bundle), { chunked });
    const message = await refusal(fetchCorpus(V, { baseUrl: server.base, env, maxBytes: 100 }));
    const length = chunked ? '' : ` (content-length ${bundle.length})`;
    expect(message).toContain(
      `could not fetch the bundle of AdCP ${V} from ${server.base}/protocol/${V}.tgz: it is larger than 100 bytes${length}. Pass a larger maxBytes if the bundle is genuine.`,
    );
    expect(trees(env)).toEqual([]);
  });
});

describe('fetchCorpus: what cannot be fetched', () => {
  it('a version the server does not have: one line naming the URL and what to do', async () => {
    const dir = fresh();
    const server = await serve({});
    const message = await refusal(fetchCorpus(V, { baseUrl: server.base, env: cacheEnv(dir) }));
    expect(message).toBe(
      `could not fetch the checksum of AdCP ${V} from ${server.base}/protocol/${V}.tgz.sha256: HTTP 404. Check that the version is published at ${server.base}/protocol/, set ADCP_BASE_URL to a mirror that has it, or install an @adcp/sdk that ships it.`,
    );
  });

  it('a server that is not there: one line, connection refused', async () => {
    const base = `http://127.0.0.1:${await closedPort()}`;
    const message = await refusal(fetchCorpus(V, { baseUrl: base, env: cacheEnv(fresh()) }));
    expect(message).toMatch(
      new RegExp(
        `^could not fetch the checksum of AdCP 9\\.9\\.1 from ${base}/protocol/9\\.9\\.1\\.tgz\\.sha256: connection refused .* set ADCP_BASE_URL`,
      ),
    );
  });

  it('a server that does not answer: one line, timed out', async () => {
    const server = createServer(() => {}); // takes the request, never answers
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push({
      close: async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      },
    });
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const message = await refusal(fetchCorpus(V, { baseUrl: base, env: cacheEnv(fresh()), timeoutMs: 200 }));
    expect(message).toContain(`from ${base}/protocol/${V}.tgz.sha256: timed out (200 ms). Check that`);
  });

  it('plain http to a host that is not loopback, without allowHttp: refused before any connection', async () => {
    const message = await refusal(
      fetchCorpus(V, { baseUrl: 'http://user:hunter2@mirror.example/adcp', env: cacheEnv(fresh()) }),
    );
    expect(message).toBe(
      'the AdCP base URL http://mirror.example/adcp is plain http to a host that is not loopback, where a bundle can be swapped in transit: use https://, or pass --allow-http (allowHttp) for a development mirror.',
    );
  });

  it('the base from env ADCP_BASE_URL, its secrets kept out of messages', async () => {
    const dir = fresh();
    const server = await serve({});
    const env = cacheEnv(dir, { ADCP_BASE_URL: `${server.base}/mirror?token=s3cr3t` });
    const message = await refusal(fetchCorpus(V, { env }));
    expect(server.hits).toEqual([`/mirror/protocol/${V}.tgz.sha256?token=s3cr3t`]);
    expect(message).not.toContain('s3cr3t');
    expect(message).toContain(`${server.base}/mirror/protocol/${V}.tgz.sha256?token=[redacted]: HTTP 404`);
  });

  it('a name that is not a version', async () => {
    expect(await refusal(fetchCorpus('3.1', { env: cacheEnv(fresh()) }))).toMatch(/"3\.1" is not an AdCP version/);
    expect(fetchedCorpusRoot('../x', cacheEnv(fresh()))).toBeUndefined();
  });
});

describe('the cached tree', () => {
  const tamperings: [string, (tree: string) => void][] = [
    ['a file edited', (tree) => appendFileSync(join(tree, 'compliance', 'universal', 'x.yaml'), '# evil\n')],
    [
      'a file replaced, same size',
      (tree) => writeFileSync(join(tree, 'compliance', 'universal', 'x.yaml'), 'id: y\nphases: []\n'),
    ],
    ['a file deleted', (tree) => unlinkSync(join(tree, 'schemas', 'core', 'thing.json'))],
    ['a file added', (tree) => writeFileSync(join(tree, 'compliance', 'universal', 'planted.yaml'), 'id: planted\n')],
    [
      'a file replaced by a link to the same content',
      (tree) => {
        const file = join(tree, 'compliance', 'universal', 'x.yaml');
        const copy = join(scratch, `link-target-${n++}.yaml`);
        writeFileSync(copy, readFileSync(file));
        unlinkSync(file);
        symlinkSync(copy, file);
      },
    ],
    [
      'its manifest edited',
      (tree) => {
        const folder = join(tree, '..', 'manifests');
        const [entry] = readdirSync(folder);
        const file = join(folder, entry!);
        writeFileSync(file, readFileSync(file, 'utf8').replace('"signed":false', '"signed":true'));
      },
    ],
  ];

  it.each(tamperings)('with %s is a miss; the next fetch replaces it', async (_, tamper) => {
    const dir = fresh();
    const env = cacheEnv(dir);
    const server = await serve(release(await realBundle(dir)));
    const got = await fetchCorpus(V, { baseUrl: server.base, env });
    tamper(join(got.root, '..'));
    expect(fetchedCorpusRoot(V, env)).toBeUndefined();
    expect(await fetchCorpus(V, { baseUrl: server.base, env })).toEqual(got); // fetched again: fromCache false
    expect(fetchedCorpusRoot(V, env)).toBe(got.root);
    expect(readFileSync(join(got.root, 'universal', 'x.yaml'), 'utf8')).toBe(TREE['compliance/universal/x.yaml']);
    expect(trees(env)).toEqual([TOP]);
  });

  it('under another per-user secret is a miss', async () => {
    const dir = fresh();
    const env = cacheEnv(dir);
    const server = await serve(release(await realBundle(dir)));
    await fetchCorpus(V, { baseUrl: server.base, env });
    // The same tree and manifest in a cache whose cache-key is another (a copy, e.g. restored by CI from elsewhere):
    // the manifest's MAC does not check under its secret.
    const copy = join(dir, 'copy');
    cpSync(env.XDG_CACHE_HOME!, copy, { recursive: true, filter: (path) => !path.endsWith('cache-key') });
    expect(existsSync(join(corpora({ XDG_CACHE_HOME: copy }), TOP, 'compliance', 'index.json'))).toBe(true);
    expect(fetchedCorpusRoot(V, { XDG_CACHE_HOME: copy })).toBeUndefined();
    expect(fetchedCorpusRoot(V, env)).toBeDefined();
  });
});

describe.skipIf(process.platform === 'win32')('signatures', () => {
  /** A `cosign` on PATH that records its arguments and exits with `code` (printing why on stderr when it fails). */
  function fakeCosign(dir: string, code: number): { bin: string; args: () => string[] } {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'cosign'),
      `#!/bin/sh\nprintf '%s\\n' "$@" > "\${0%/*}/args.txt"\n[ ${code} = 0 ] || echo 'Error: none of the expected identities matched what was in the certificate' >&2\nexit ${code}\n`,
    );
    chmodSync(join(bin, 'cosign'), 0o755);
    return { bin, args: () => readFileSync(join(bin, 'args.txt'), 'utf8').trim().split('\n') };
  }

  it('requireSignature: an unsigned release is refused before the bundle is downloaded', async () => {
    const dir = fresh();
    const env = cacheEnv(dir);
    const server = await serve(release(await realBundle(dir)));
    const message = await refusal(fetchCorpus(V, { baseUrl: server.base, env, requireSignature: true }));
    expect(message).toMatch(
      /^AdCP 9\.9\.1 at .* is not signed \(no \.sig and \.crt beside it\), and a signature is required/,
    );
    expect(server.hits).not.toContain(`/protocol/${V}.tgz`);
    expect(trees(env)).toEqual([]);
    // The same through the environment.
    const byEnv = cacheEnv(fresh(), { ADCP_REQUIRE_SIGNATURE: '1' });
    expect(await refusal(fetchCorpus(V, { baseUrl: server.base, env: byEnv }))).toMatch(/is not signed/);
  });

  it('without requireSignature, an unsigned release is taken on its checksum, with a note; the requirement later refuses it from the cache', async () => {
    const dir = fresh();
    const env = cacheEnv(dir);
    const server = await serve(release(await realBundle(dir)));
    const lines: string[] = [];
    await fetchCorpus(V, { baseUrl: server.base, env, onProgress: (line) => lines.push(line) });
    expect(lines[0]).toBe(
      `[vitest-adcp] AdCP ${V} is not signed (no .sig and .crt beside it): checked against its sha256 only`,
    );
    expect(fetchedCorpusRoot(V, env)).toBeDefined();
    expect(fetchedCorpusRoot(V, { ...env, ADCP_REQUIRE_SIGNATURE: '1' })).toBeUndefined();
  });

  it('a signature cosign does not verify: refused, nothing unpacked', async () => {
    const dir = fresh();
    const cosign = fakeCosign(dir, 1);
    const env = cacheEnv(dir, { PATH: cosign.bin });
    const server = await serve(release(await realBundle(dir), { signed: true }));
    const message = await refusal(fetchCorpus(V, { baseUrl: server.base, env }));
    expect(message).toBe(
      `AdCP ${V}'s cosign signature does not verify (cosign: "Error: none of the expected identities matched what was in the certificate"): the bundle is refused and nothing was unpacked. If the release is signed by another identity, set ADCP_COSIGN_IDENTITY_REGEXP / ADCP_COSIGN_ISSUER_REGEXP.`,
    );
    expect(trees(env)).toEqual([]);
  });

  it('a signature cosign verifies: accepted, against the adcontextprotocol GitHub workflows (or the identity env names)', async () => {
    const dir = fresh();
    const cosign = fakeCosign(dir, 0);
    const env = cacheEnv(dir, { PATH: cosign.bin, ADCP_REQUIRE_SIGNATURE: '1' });
    const server = await serve(release(await realBundle(dir), { signed: true }));
    const lines: string[] = [];
    const got = await fetchCorpus(V, { baseUrl: server.base, env, onProgress: (line) => lines.push(line) });
    expect(got.fromCache).toBe(false);
    expect(lines.at(-1)).toMatch(/sha256 and cosign signature verified/);
    const args = cosign.args();
    expect(args[0]).toBe('verify-blob');
    expect(args.slice(1, 5)).toEqual([
      '--signature',
      expect.stringMatching(/\.sig$/),
      '--certificate',
      expect.stringMatching(/\.crt$/),
    ]);
    expect(args.slice(5, 9)).toEqual([
      '--certificate-identity-regexp',
      '^https://github\\.com/adcontextprotocol/[^/]+/\\.github/workflows/[^@]+@refs/(tags|heads)/.+$',
      '--certificate-oidc-issuer-regexp',
      '^https://token\\.actions\\.githubusercontent\\.com$',
    ]);
    expect(fetchedCorpusRoot(V, env)).toBe(got.root); // signed: good under ADCP_REQUIRE_SIGNATURE too

    const other = fresh();
    const overridden = fakeCosign(other, 0);
    const otherEnv = cacheEnv(other, {
      PATH: overridden.bin,
      ADCP_COSIGN_IDENTITY_REGEXP: '^https://github\\.com/my-fork/',
      ADCP_COSIGN_ISSUER_REGEXP: '^https://issuer\\.example$',
    });
    await fetchCorpus(V, { baseUrl: server.base, env: otherEnv });
    expect(overridden.args().slice(5, 9)).toEqual([
      '--certificate-identity-regexp',
      '^https://github\\.com/my-fork/',
      '--certificate-oidc-issuer-regexp',
      '^https://issuer\\.example$',
    ]);
  });

  it('a signed release and no cosign on PATH: refused with requireSignature, else taken on its checksum with a note', async () => {
    const dir = fresh();
    const server = await serve(release(await realBundle(dir), { signed: true }));
    const required = await refusal(
      fetchCorpus(V, { baseUrl: server.base, env: cacheEnv(dir), requireSignature: true }),
    );
    expect(required).toMatch(
      /^AdCP 9\.9\.1 is signed, but no cosign is on PATH to verify it, and a signature is required .* install cosign/,
    );
    const lines: string[] = [];
    const got = await fetchCorpus(V, { baseUrl: server.base, env: cacheEnv(dir), onProgress: (l) => lines.push(l) });
    expect(got.fromCache).toBe(false);
    expect(lines).toContain(
      `[vitest-adcp] AdCP ${V} is signed, but no cosign is on PATH to verify it: checked against its sha256 only`,
    );
  });
});

describe('a run naming a published version (corpus.ts prepareCorpus, resolveCorpus)', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('is fetched once, then resolved from the per-user cache with its schemas and why it is this corpus', async () => {
    const dir = fresh();
    const env = cacheEnv(dir);
    vi.stubEnv('XDG_CACHE_HOME', env.XDG_CACHE_HOME!);
    const repo = join(import.meta.dirname, '..', '..');
    expect(needsFetch(V, repo)).toBe(true);
    expect(() => resolveCorpus(V, repo)).toThrow(/neither in the installed @adcp\/sdk .* nor fetched/);
    const server = await serve(release(await realBundle(dir)));
    const progress: string[] = [];
    await prepareCorpus(V, repo, { baseUrl: server.base, env, onProgress: (line) => progress.push(line) });
    expect(progress.join('\n')).toContain(`${server.base}/protocol/${V}.tgz`);
    expect(needsFetch(V, repo)).toBe(false);
    const corpus = resolveCorpus(V, repo);
    expect(corpus).toEqual({
      root: join(corpora(env), TOP, 'compliance'),
      version: V,
      schemasDir: join(corpora(env), TOP, 'schemas'),
      choice: `named, fetched from ${server.base}/protocol/${V}.tgz, kept in the per-user cache`,
    });
    // Installed versions and paths are never fetched.
    expect(needsFetch('3.0.6', repo)).toBe(false);
    expect(needsFetch('./some/tree', repo)).toBe(false);
    expect(needsFetch(undefined, repo)).toBe(false);
  });
});
