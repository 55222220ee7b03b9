/**
 * Fetching a published AdCP protocol bundle by version into the per-user cache, for a corpus no installed `@adcp/sdk`
 * ships. The AdCP project publishes each release as `<base>/protocol/<version>.tgz` with `<version>.tgz.sha256` beside
 * it, and for signed releases cosign's `<version>.tgz.sig` and `.crt`. The bundle holds `adcp-<version>/compliance/`
 * (the storyboards) and `adcp-<version>/schemas/` (the modular JSON Schemas, used instead of `schemas/bundled/`).
 *
 * Nothing is unpacked before it is checked: the download is bounded in size and time, its SHA-256 must be the one the
 * `.sha256` names, a published signature must verify (cosign, when installed — required with `requireSignature`),
 * and every tar entry must be a plain file or folder below `adcp-<version>/`, within an entry count and unpacked size,
 * or the whole bundle is refused. The SHA-256 comes from the same server as the bundle: it catches a damaged or
 * truncated download, not a hostile server — the signature is what does that.
 *
 * The tree is unpacked into a temporary folder of the cache and renamed into place (`corpora/adcp-<version>/`): a
 * parallel process sees the whole tree or none. Only `compliance/` and `schemas/` (without `schemas/bundled/`) are
 * unpacked; every file 0644, every folder 0755. Its manifest — every file's path, size and SHA-256, the version, the
 * source URL, the bundle's SHA-256 — is written as an authenticated cache entry (cache/disk-cache.ts: a MAC under a
 * per-user secret kept outside the cache). A later process uses the tree only when that MAC checks and every file on
 * disk matches the manifest, nothing else (no link, no extra file) lying there: an edited, incomplete or planted tree
 * is a miss and is fetched again, never used. Verified once per version per process.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { createGunzip } from 'node:zlib';
// tar is imported when a bundle is fetched: every worker of every run imports this module (through corpus.ts).
import type { Parser, ReadEntry } from 'tar';
import { dispatcherFor, undici, type Dispatcher } from '../model/undici.js';
import { DiskCache, cacheSecret, userCacheRoot } from '../cache/disk-cache.js';
import { isLoopbackHost } from '../model/addresses.js';
import { ConfigurationError } from '../model/errors.js';
import { scrubSecrets, secretsInUrl } from '../model/redact.js';

/** A bundle that cannot be fetched, verified or unpacked; the message (one line) says what to do. */
export class CorpusFetchError extends ConfigurationError {}

export const DEFAULT_BASE_URL = 'https://adcontextprotocol.org';

export interface FetchCorpusOptions {
  /** Where releases are published (`<base>/protocol/<version>.tgz`). @default env ADCP_BASE_URL, else DEFAULT_BASE_URL */
  baseUrl?: string;
  /** A plain-http base on a host that is not loopback (a development mirror). @default false */
  allowHttp?: boolean;
  /** Refuse a bundle whose cosign signature is not published or cannot be checked. @default env ADCP_REQUIRE_SIGNATURE=1 */
  requireSignature?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Progress and notes, one line each (`[vitest-adcp] …`). */
  onProgress?: (line: string) => void;
  /** Per HTTP request, the whole exchange. @default 120 s */
  timeoutMs?: number;
  /** The largest bundle downloaded. @default 64 MiB */
  maxBytes?: number;
}

export interface FetchedCorpus {
  /** The compliance tree: `…/corpora/adcp-<version>/compliance`. */
  root: string;
  /** The bundle's modular JSON Schemas: `…/corpora/adcp-<version>/schemas`. */
  schemasDir: string;
  version: string;
  /** Found verified in the cache: nothing was downloaded. */
  fromCache: boolean;
}

const VERSION = /^\d+\.\d+\.\d+(-[\w.]+)?$/;
const MiB = 1024 * 1024;
const DEFAULT_MAX_BYTES = 64 * MiB;
const SIDECAR_MAX_BYTES = 16 * 1024;
const DEFAULT_TIMEOUT_MS = 120_000;
/** Far above a real bundle (3.1.19: about 1,050 entries). */
const MAX_ENTRIES = 20_000;
/** Of the tar stream, headers included: a gzip bomb stops here, not at the disk's end. */
const MAX_UNPACKED_BYTES = 512 * MiB;
const MAX_META_BYTES = 64 * 1024;
const MAX_REDIRECTS = 5;
const COSIGN_TIMEOUT_MS = 120_000;
/** Keyless signatures made by a GitHub Actions workflow of a repository of the adcontextprotocol organisation. */
const COSIGN_IDENTITY = '^https://github\\.com/adcontextprotocol/[^/]+/\\.github/workflows/[^@]+@refs/(tags|heads)/.+$';
const COSIGN_ISSUER = '^https://token\\.actions\\.githubusercontent\\.com$';

interface Manifest {
  version: string;
  /** The bundle's URL (without credentials). */
  source: string;
  sha256: string;
  /** The cosign signature was verified (else: the checksum only). */
  signed: boolean;
  /** Every file below `adcp-<version>/`: path (with `/`), size, SHA-256. */
  files: [string, number, string][];
}

const flag = (value: string | undefined) => /^(1|true|yes)$/i.test(value ?? '');
const corporaDir = (env: NodeJS.ProcessEnv) => join(userCacheRoot(env), 'corpora');
const manifests = (env: NodeJS.ProcessEnv) =>
  new DiskCache(corporaDir(env), 'manifests', '.json', ['corpus-manifest-v1'], cacheSecret(userCacheRoot(env)));

// ─── The cache ──────────────────────────────────────────────────────────────

type CachedTree = Pick<Manifest, 'source' | 'signed'> & { root: string };

/** Trees verified in this process, by corpora folder and version. */
const verified = new Map<string, CachedTree>();

/**
 * The compliance root (`…/adcp-<version>/compliance`) of a bundle fetched before, when its manifest's MAC checks and
 * the tree on disk is exactly the manifest's (with env ADCP_REQUIRE_SIGNATURE=1: and its signature was verified);
 * else undefined.
 */
export function fetchedCorpusRoot(version: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const tree = cachedTree(version, env);
  if (!tree || (flag(env.ADCP_REQUIRE_SIGNATURE) && !tree.signed)) return undefined;
  return join(tree.root, 'compliance');
}

/** Where the cached corpus of `version` was fetched from (its bundle's URL), when fetchedCorpusRoot has it. */
export function fetchedFrom(version: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return fetchedCorpusRoot(version, env) === undefined ? undefined : cachedTree(version, env)?.source;
}

function cachedTree(version: string, env: NodeJS.ProcessEnv): CachedTree | undefined {
  if (!VERSION.test(version)) return undefined;
  const memo = `${corporaDir(env)}\0${version}`;
  const known = verified.get(memo);
  if (known && existsSync(join(known.root, 'compliance', 'index.json'))) return known;
  const cache = manifests(env);
  const manifest = cache.readJson(cache.key(version), isManifest);
  const root = join(corporaDir(env), `adcp-${version}`);
  if (manifest?.version !== version || !isRealDir(root) || !treeMatches(root, manifest.files)) return undefined;
  const tree = { root, source: manifest.source, signed: manifest.signed };
  verified.set(memo, tree);
  return tree;
}

const isManifest = (value: unknown): value is Manifest => {
  const m = value as Partial<Manifest> | null;
  return typeof m?.version === 'string' && typeof m.source === 'string' && typeof m.signed === 'boolean' && !!m.files;
};

function isRealDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Walks `root` without following links: folders are walked (and handed to `onDir`), regular files handed to `onFile`
 * (path relative to `root`, with `/`); anything else (a link, FIFO, socket, device), or `onFile` returning false,
 * makes it false.
 */
function walkTree(root: string, onFile: (rel: string, full: string) => boolean, onDir?: (full: string) => void) {
  const walk = (dir: string, rel: string): boolean => {
    onDir?.(dir);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const full = join(dir, entry.name);
      if (!(entry.isDirectory() ? walk(full, path) : entry.isFile() && onFile(path, full))) return false;
    }
    return true;
  };
  try {
    return walk(root, '');
  } catch {
    return false;
  }
}

/** Every file of the manifest is there with its size and SHA-256, and nothing else is. */
function treeMatches(root: string, files: Manifest['files']): boolean {
  const expected = new Map(files.map(([path, size, sha256]) => [path, { size, sha256 }]));
  let seen = 0;
  const ok = walkTree(root, (path, full) => {
    const want = expected.get(path);
    seen++;
    return want !== undefined && fileDigest(full, want.size) === want.sha256;
  });
  return ok && seen === expected.size;
}

/** SHA-256 (hex) of a regular file, opened without following a link; undefined when it is not one (of `size` bytes). */
function fileDigest(file: string, size?: number): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
    const stat = fstatSync(fd);
    if (!stat.isFile() || (size !== undefined && stat.size !== size)) return undefined;
    const hash = createHash('sha256');
    const buffer = Buffer.alloc(Math.min(MiB, Math.max(1, stat.size)));
    for (let n; (n = readSync(fd, buffer, 0, buffer.length, null)) > 0;) hash.update(buffer.subarray(0, n));
    return hash.digest('hex');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

// ─── Fetching ───────────────────────────────────────────────────────────────

interface Fetch {
  version: string;
  baseUrl: URL;
  allowHttp: boolean;
  requireSignature: boolean;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  dispatcher: Dispatcher;
  /** A URL as messages show it: no user, password or secret query value. */
  show: (url: URL) => string;
  progress: (line: string) => void;
}

/**
 * The corpus of AdCP `version`: from the cache when a verified copy is there (no network), else downloaded from
 * `<base>/protocol/<version>.tgz`, verified, unpacked and cached. Throws CorpusFetchError.
 */
export async function fetchCorpus(version: string, options: FetchCorpusOptions = {}): Promise<FetchedCorpus> {
  const env = options.env ?? process.env;
  if (!VERSION.test(version)) {
    throw new CorpusFetchError(
      `${JSON.stringify(version.slice(0, 100))} is not an AdCP version: name a published one like 3.1.19 or 3.2.0-beta.5.`,
    );
  }
  const requireSignature = options.requireSignature ?? flag(env.ADCP_REQUIRE_SIGNATURE);
  const cached = cachedTree(version, env);
  if (cached && (cached.signed || !requireSignature)) return corpusAt(cached.root, version, true);
  const given = options.baseUrl || env.ADCP_BASE_URL || DEFAULT_BASE_URL;
  const secrets = secretsInUrl(given);
  const show = (url: URL) => scrubSecrets(Object.assign(new URL(url), { username: '', password: '' }).href, secrets);
  const allowHttp = options.allowHttp === true;
  const baseUrl = checkedBase(given, allowHttp, show);
  const dispatcher = dispatcherFor(env, { connectTimeout: 10_000, keepAliveTimeout: 1_000 });
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const progress = (line: string) => options.onProgress?.(`[vitest-adcp] ${line}`);
  const f: Fetch = { version, baseUrl, allowHttp, requireSignature, env, timeoutMs, dispatcher, show, progress };
  try {
    return corpusAt(await download(f, options.maxBytes ?? DEFAULT_MAX_BYTES), version, false);
  } finally {
    await dispatcher.close().catch(() => {});
  }
}

function corpusAt(root: string, version: string, fromCache: boolean): FetchedCorpus {
  return { root: join(root, 'compliance'), schemasDir: join(root, 'schemas'), version, fromCache };
}

async function download(f: Fetch, maxBytes: number): Promise<string> {
  const tgzUrl = asset(f, `${f.version}.tgz`);
  const sums = await get(f, asset(f, `${f.version}.tgz.sha256`), SIDECAR_MAX_BYTES, 'the checksum');
  const expected = /^\s*([0-9a-fA-F]{64})(\s|$)/.exec(sums.toString('latin1'))?.[1]?.toLowerCase();
  if (!expected) {
    throw new CorpusFetchError(
      `the checksum file of AdCP ${f.version} (${f.show(tgzUrl)}.sha256) holds no SHA-256: report it to the mirror's maintainer, or set ADCP_BASE_URL to ${DEFAULT_BASE_URL}.`,
    );
  }
  const signature = await signatureFiles(f, tgzUrl);
  f.progress(`fetching AdCP ${f.version} from ${f.show(tgzUrl)}`);
  const tgz = await get(f, tgzUrl, maxBytes, 'the bundle');
  const actual = createHash('sha256').update(tgz).digest('hex');
  if (actual !== expected) {
    throw new CorpusFetchError(
      `AdCP ${f.version} from ${f.show(tgzUrl)} does not match its .sha256 (expected ${expected}, got ${actual}): a damaged download or a tampered mirror; nothing was unpacked. Try again, or set ADCP_BASE_URL to ${DEFAULT_BASE_URL}.`,
    );
  }
  const signed = signature ? await cosignVerify(f, tgz, signature) : false;
  const { root, files } = await unpack(f, tgz, tgzUrl);
  const cache = manifests(f.env);
  const manifest: Manifest = { version: f.version, source: f.show(tgzUrl), sha256: actual, signed, files };
  cache.write(cache.key(f.version), JSON.stringify(manifest));
  verified.delete(`${corporaDir(f.env)}\0${f.version}`);
  const checked = signed ? 'sha256 and cosign signature verified' : 'sha256 verified';
  f.progress(`AdCP ${f.version}: ${(tgz.length / MiB).toFixed(1)} MB, ${checked}, ${files.length} files in ${root}`);
  return root;
}

/** The base URL when it may be used: http(s), and plain http only to a loopback host or with `allowHttp`. */
function checkedBase(given: string, allowHttp: boolean, show: (url: URL) => string): URL {
  if (!URL.canParse(given)) {
    throw new CorpusFetchError(
      `the AdCP base URL "${scrubSecrets(given, secretsInUrl(given)).slice(0, 200)}" is not a URL: set ADCP_BASE_URL to one like ${DEFAULT_BASE_URL}.`,
    );
  }
  const url = new URL(given);
  const refusal = schemeRefusal(url, allowHttp);
  if (refusal) throw new CorpusFetchError(`the AdCP base URL ${show(url)} ${refusal}.`);
  return url;
}

function schemeRefusal(url: URL, allowHttp: boolean): string | undefined {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `is ${url.protocol}, not https: use https://`;
  if (url.protocol === 'http:' && !allowHttp && !isLoopbackHost(url.hostname))
    return 'is plain http to a host that is not loopback, where a bundle can be swapped in transit: use https://, or pass --allow-http (allowHttp) for a development mirror';
  return undefined;
}

/** `<base>/protocol/<file>`, the base's query (a mirror's token) kept. */
function asset(f: Fetch, file: string): URL {
  const url = new URL(f.baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/protocol/${file}`;
  return url;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** What a mirror answers for a file it does not have (S3 and the CDNs in front of it: 403). */
const MISSING = new Set([403, 404, 410]);

/**
 * The body of a GET, at most `maxBytes`, within `timeoutMs`; redirects followed (to https, or plain http where the
 * base's rule allows it). `optional`: a missing file is undefined rather than an error.
 */
async function get(f: Fetch, url: URL, maxBytes: number, what: string): Promise<Buffer>;
async function get(f: Fetch, url: URL, maxBytes: number, what: string, optional: true): Promise<Buffer | undefined>;
async function get(f: Fetch, url: URL, maxBytes: number, what: string, optional = false) {
  const fail = (why: string, next = nextStep(f)) =>
    new CorpusFetchError(`could not fetch ${what} of AdCP ${f.version} from ${f.show(url)}: ${why}. ${next}`.trim());
  let current = url;
  for (let hops = 0; ; hops++) {
    let answer: Dispatcher.ResponseData;
    try {
      const headers = { 'accept-encoding': 'identity', 'user-agent': 'vitest-adcp' };
      const signal = AbortSignal.timeout(f.timeoutMs);
      answer = await undici().request(current, { method: 'GET', dispatcher: f.dispatcher, signal, headers });
    } catch (error) {
      throw fail(networkReason(error, f.timeoutMs));
    }
    const location = answer.headers.location;
    if (REDIRECTS.has(answer.statusCode) && typeof location === 'string') {
      await answer.body.dump().catch(() => {});
      const next = new URL(location, current);
      const refusal = schemeRefusal(next, f.allowHttp);
      if (refusal) throw fail(`it redirects to ${f.show(next)}, which ${refusal}`, '');
      if (hops >= MAX_REDIRECTS) throw fail(`more than ${MAX_REDIRECTS} redirects`);
      current = next;
    } else if (answer.statusCode !== 200) {
      await answer.body.dump().catch(() => {});
      if (optional && MISSING.has(answer.statusCode)) return undefined;
      throw fail(`HTTP ${answer.statusCode}`);
    } else {
      return readBody(answer, maxBytes, f.timeoutMs).catch((error: Error) => {
        throw fail(error.message, error instanceof TooLarge ? 'Pass a larger maxBytes if the bundle is genuine.' : '');
      });
    }
  }
}

function nextStep(f: Fetch): string {
  const index = f.show(new URL(`${f.baseUrl.pathname.replace(/\/+$/, '')}/protocol/`, f.baseUrl));
  return `Check that the version is published at ${index}, set ADCP_BASE_URL to a mirror that has it, or install an @adcp/sdk that ships it.`;
}

class TooLarge extends Error {}

async function readBody(answer: Dispatcher.ResponseData, maxBytes: number, timeoutMs: number): Promise<Buffer> {
  const [chunks, declared] = [[] as Buffer[], Number(answer.headers['content-length'])];
  let total = 0;
  answer.body.on('error', () => {}); // destroying it below is not an error anyone should hear of
  try {
    if (declared > maxBytes) throw new TooLarge(`it is larger than ${maxBytes} bytes (content-length ${declared})`);
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw new TooLarge(`it is larger than ${maxBytes} bytes`);
      chunks.push(chunk);
    }
  } catch (error) {
    answer.body.destroy();
    if (error instanceof TooLarge) throw error;
    throw new Error(networkReason(error, timeoutMs), { cause: error });
  }
  return Buffer.concat(chunks);
}

/** What went wrong on the network, in words: refused, unresolvable (offline?), timed out, reset. */
function networkReason(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  if (/^(Timeout|Abort)Error$/.test(e.name ?? '') || code.includes('TIMEOUT')) return `timed out (${timeoutMs} ms)`;
  if (code === 'ECONNREFUSED') return 'connection refused (is the server up?)';
  if (/^(ENOTFOUND|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH)$/.test(code)) return `unreachable (${code}: offline?)`;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the connection was closed mid-answer';
  return (e.message ?? String(error)).split('\n')[0]!.slice(0, 200);
}

// ─── Signatures ─────────────────────────────────────────────────────────────

/** The `.sig` and `.crt` beside the bundle when both are published; else undefined (refused with requireSignature). */
async function signatureFiles(f: Fetch, tgzUrl: URL): Promise<{ sig: Buffer; crt: Buffer } | undefined> {
  const sig = await get(f, asset(f, `${f.version}.tgz.sig`), SIDECAR_MAX_BYTES, 'the signature', true);
  const crt = sig && (await get(f, asset(f, `${f.version}.tgz.crt`), SIDECAR_MAX_BYTES, 'the certificate', true));
  if (sig && crt) return { sig, crt };
  if (f.requireSignature) {
    throw new CorpusFetchError(
      `AdCP ${f.version} at ${f.show(tgzUrl)} is not signed (no .sig and .crt beside it), and a signature is required (requireSignature, ADCP_REQUIRE_SIGNATURE=1): use a signed release, or drop the requirement to trust its sha256 alone.`,
    );
  }
  f.progress(`AdCP ${f.version} is not signed (no .sig and .crt beside it): checked against its sha256 only`);
  return undefined;
}

/**
 * Verifies the bundle's keyless cosign signature (certificate identity and issuer: a GitHub Actions workflow of the
 * adcontextprotocol organisation, or env ADCP_COSIGN_IDENTITY_REGEXP / ADCP_COSIGN_ISSUER_REGEXP). True when it
 * verifies; throws when it does not; false when no cosign is on PATH (refused with requireSignature).
 */
async function cosignVerify(f: Fetch, tgz: Buffer, signature: { sig: Buffer; crt: Buffer }): Promise<boolean> {
  const cosign = onPath('cosign', f.env);
  if (!cosign) {
    const why = `AdCP ${f.version} is signed, but no cosign is on PATH to verify it`;
    if (f.requireSignature)
      throw new CorpusFetchError(
        `${why}, and a signature is required (requireSignature, ADCP_REQUIRE_SIGNATURE=1): install cosign (https://docs.sigstore.dev/cosign/system_config/installation/), or drop the requirement.`,
      );
    f.progress(`${why}: checked against its sha256 only`);
    return false;
  }
  const dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-cosign-'));
  try {
    const blobs = { tgz, sig: signature.sig, crt: signature.crt };
    for (const [name, bytes] of Object.entries(blobs)) writeFileSync(join(dir, `bundle.${name}`), bytes);
    const [blob, sig, crt] = ['tgz', 'sig', 'crt'].map((name) => join(dir, `bundle.${name}`)) as [
      string,
      string,
      string,
    ];
    const identity = f.env.ADCP_COSIGN_IDENTITY_REGEXP || COSIGN_IDENTITY;
    const issuer = f.env.ADCP_COSIGN_ISSUER_REGEXP || COSIGN_ISSUER;
    const args = ['verify-blob', '--signature', sig, '--certificate', crt];
    args.push('--certificate-identity-regexp', identity, '--certificate-oidc-issuer-regexp', issuer, blob);
    const said = await run(cosign, args, f.env);
    if (said === undefined) return true;
    throw new CorpusFetchError(
      `AdCP ${f.version}'s cosign signature does not verify (cosign: ${JSON.stringify(said)}): the bundle is refused and nothing was unpacked. If the release is signed by another identity, set ADCP_COSIGN_IDENTITY_REGEXP / ADCP_COSIGN_ISSUER_REGEXP.`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a program to its end: undefined when it succeeds, else the last line it printed (or why it did not run). */
async function run(program: string, args: string[], env: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    await promisify(execFile)(program, args, { env, timeout: COSIGN_TIMEOUT_MS, maxBuffer: MiB });
    return undefined;
  } catch (error) {
    const e = error as { stderr?: string; message?: string };
    return (e.stderr?.trim() || e.message || '').trim().split('\n').at(-1)!.slice(0, 300);
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const extensions = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  const dirs = (env.PATH ?? env.Path ?? '').split(delimiter).filter(Boolean);
  for (const file of dirs.flatMap((dir) => extensions.map((extension) => join(dir, name + extension)))) {
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

// ─── Unpacking ──────────────────────────────────────────────────────────────

const PLAIN = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory']);
/** Warnings are errors; a pax or long-name header is at most this big. */
const TAR = { strict: true, maxMetaEntrySize: MAX_META_BYTES };

/** Why an entry is refused, or undefined: only plain files and folders, below `top/`, by a clean relative path. */
function entryProblem(entry: ReadEntry, top: string): string | undefined {
  if (!PLAIN.has(entry.type)) return `is a ${entry.type} (only files and folders are unpacked)`;
  const path = entry.path;
  if (/^([a-zA-Z]:|[\\/])/.test(path)) return 'has an absolute path';
  if (/[\\\0-\x1f]/.test(path)) return 'has a backslash or a control character in its path';
  const segments = path.replace(/\/$/, '').split('/');
  if (segments.includes('..')) return 'has a ".." in its path';
  if (segments[0] !== top || segments.some((s) => s === '' || s === '.')) return `lies outside ${top}/`;
  return undefined;
}

/**
 * Reads every entry of the bundle and throws at the first that may not be unpacked (entryProblem, a name seen twice,
 * a type tar itself skips), past MAX_ENTRIES or past MAX_UNPACKED_BYTES: before anything is written.
 */
async function checkEntries(f: Fetch, tgz: Buffer, tgzUrl: URL): Promise<void> {
  const top = `adcp-${f.version}`;
  const names = new Set<string>();
  let [count, bytes] = [0, 0];
  let problem: string | undefined;
  const refuse = (path: string, why: string) => {
    problem ??= `its entry ${JSON.stringify(path.slice(0, 200))} ${why}`;
    parser.abort(new Error(problem));
  };
  const { Parser } = await import('tar');
  const parser = new Parser({
    ...TAR,
    onReadEntry: (entry) => {
      entry.resume(); // its data is not wanted here (a bare Parser would wait for it to be read)
      // Folded as a case-insensitive file system would: two names for one file there.
      const name = entry.path.replace(/\/+$/, '').normalize('NFC').toLowerCase();
      const why = entryProblem(entry, top) ?? (names.has(name) ? 'appears twice' : undefined);
      names.add(name);
      bytes += entry.size;
      if (why) refuse(entry.path, why);
      else if (++count > MAX_ENTRIES) refuse(entry.path, `is past ${MAX_ENTRIES} entries`);
      else if (bytes > MAX_UNPACKED_BYTES) refuse(entry.path, `takes it past ${MAX_UNPACKED_BYTES / MiB} MiB unpacked`);
    },
  });
  parser.on('ignoredEntry', (entry: ReadEntry) =>
    refuse(entry.path, `is of a type tar does not unpack (${entry.type})`),
  );
  try {
    await feed(parser, tgz);
  } catch (error) {
    throw new CorpusFetchError(
      `AdCP ${f.version} from ${f.show(tgzUrl)} is refused: ${problem ?? `it is not a readable .tgz (${(error as Error).message.split('\n')[0]})`}; nothing was unpacked. Report it to the publisher, or set ADCP_BASE_URL to ${DEFAULT_BASE_URL}.`,
    );
  }
}

/** Gunzips `tgz` into `parser` (a tar Parser or UnpackSync), at most MAX_UNPACKED_BYTES of tar; resolves when it ends. */
async function feed(parser: Parser, tgz: Buffer): Promise<void> {
  const ended = new Promise<void>((resolve, reject) => parser.on('end', resolve).on('error', reject));
  ended.catch(() => {});
  const gunzip = createGunzip();
  gunzip.end(tgz);
  let total = 0;
  for await (const chunk of gunzip as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > MAX_UNPACKED_BYTES) throw new Error(`it unpacks to more than ${MAX_UNPACKED_BYTES / MiB} MiB`);
    if (!parser.write(chunk)) await Promise.race([once(parser, 'drain'), ended]);
  }
  parser.end();
  await ended;
}

/** What is unpacked: `compliance/` and `schemas/` (and the top folder), never `schemas/bundled/`. */
function wanted(path: string, top: string): boolean {
  const rel = path.replace(/\/+$/, '').slice(top.length + 1);
  return rel === '' || (/^(compliance|schemas)(\/|$)/.test(rel) && !/^schemas\/bundled(\/|$)/.test(rel));
}

/**
 * Checks, then unpacks the bundle into a temporary folder of the corpora folder, normalises modes, lists and hashes
 * every file, and renames the tree into place. Returns the tree's path and its files.
 */
async function unpack(f: Fetch, tgz: Buffer, tgzUrl: URL): Promise<{ root: string; files: Manifest['files'] }> {
  await checkEntries(f, tgz, tgzUrl);
  const top = `adcp-${f.version}`;
  const corpora = corporaDir(f.env);
  let partial: string | undefined;
  try {
    mkdirSync(corpora, { recursive: true });
    sweepPartials(corpora);
    partial = mkdtempSync(join(corpora, `.partial-${f.version}-`));
    // Owners are never taken from the archive (as root, tar would); links and devices were refused above, and are
    // filtered out here too. Synchronous: twice as fast as tar's async Unpack (about 0.5 s for 3.1.19's 960 files).
    const filter = (path: string, entry: object) => wanted(path, top) && 'type' in entry && PLAIN.has(`${entry.type}`);
    await feed(new (await import('tar')).UnpackSync({ ...TAR, cwd: partial, preserveOwner: false, filter }), tgz);
    const tree = join(partial, top);
    if (!existsSync(join(tree, 'compliance', 'index.json')) || !isRealDir(join(tree, 'schemas'))) {
      throw new CorpusFetchError(
        `AdCP ${f.version} from ${f.show(tgzUrl)} has no ${top}/compliance/index.json or no ${top}/schemas/: it is not a protocol bundle. ${nextStep(f)}`,
      );
    }
    const [files, root] = [normalise(tree), join(corpora, top)];
    place(tree, root, files, partial);
    return { root, files };
  } catch (error) {
    if (error instanceof CorpusFetchError) throw error;
    throw new CorpusFetchError(
      `could not unpack AdCP ${f.version} into ${corpora}: ${(error as Error).message.split('\n')[0]}. Check that the folder is writable (it is in the per-user cache: XDG_CACHE_HOME).`,
    );
  } finally {
    if (partial) rmSync(partial, { recursive: true, force: true });
  }
}

/** Folders 0755, files 0644 (whatever the archive said); every file's path, size and SHA-256, sorted by path. */
function normalise(tree: string): Manifest['files'] {
  const files: Manifest['files'] = [];
  const onFile = (path: string, full: string) => {
    chmodSync(full, 0o644);
    const sha256 = fileDigest(full);
    if (sha256) files.push([path, statSync(full).size, sha256]);
    return sha256 !== undefined;
  };
  if (!walkTree(tree, onFile, (dir) => chmodSync(dir, 0o755)))
    throw new Error('the unpacked tree holds something other than files and folders');
  return files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Renames the unpacked tree to `root`. A tree already there is kept when it is this one (a parallel fetch won), else
 * moved aside into `partial` (deleted with it) first: a reader in between finds no tree (a miss), never half of one.
 */
function place(tree: string, root: string, files: Manifest['files'], partial: string): void {
  try {
    renameSync(tree, root);
    return;
  } catch (error) {
    if (!['ENOTEMPTY', 'EEXIST', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
  if (isRealDir(root) && treeMatches(root, files)) return;
  renameSync(root, join(partial, 'replaced'));
  renameSync(tree, root);
}

/** Temporary folders a killed process left behind, an hour old or more (a live fetch takes seconds). */
function sweepPartials(corpora: string): void {
  for (const name of readdirSync(corpora).filter((n) => n.startsWith('.partial-'))) {
    const path = join(corpora, name);
    // Another process may be sweeping it too: nothing here throws for a folder that is gone.
    const age = Date.now() - (lstatSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > 3_600_000) rmSync(path, { recursive: true, force: true });
  }
}
