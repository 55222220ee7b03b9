/**
 * When each storyboard's run ended in the runs before (src/plugin/finish-times.ts): the order a worker takes its files
 * in. Kept in the cache directory as one authenticated entry: read back by the next run (another instance), latest
 * times first, bounded, and not read when planted or edited.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DiskCache } from '../../src/cache/disk-cache.js';
import { FinishTimes, MAX_FILES } from '../../src/plugin/finish-times.js';

const secret = randomBytes(32);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function cacheDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'finish-times-'));
  dirs.push(dir);
  return dir;
}

/** The times kept in `dir`, as a new run reads them (a new instance). */
const kept = (dir: string) =>
  new FinishTimes(new DiskCache(dir, 'runs', '.json', ['vitest-adcp-finish-times-v1'], secret));

/** The entry's one file. */
function entryFile(dir: string): string {
  const files = readdirSync(join(dir, 'runs'));
  expect(files).toHaveLength(1);
  return join(dir, 'runs', files[0]!);
}

describe('finish times', () => {
  it("are read back by the next run: each file's latest time, the files of other runs kept", () => {
    const dir = cacheDir();
    kept(dir).record(
      new Map([
        ['/c/a.yaml', 300],
        ['/c/b.yaml', 900],
        ['/c/c.yaml', 600],
      ]),
    );
    const next = kept(dir);
    expect(['/c/a.yaml', '/c/b.yaml', '/c/c.yaml', '/c/d.yaml'].map((f) => next.get(f))).toEqual([
      300,
      900,
      600,
      undefined,
    ]);
    // A filtered run ran two of them, and another file.
    next.record(
      new Map([
        ['/c/b.yaml', 100],
        ['/c/d.yaml', 50],
      ]),
    );
    expect(next.get('/c/b.yaml')).toBe(100);
    const third = kept(dir);
    expect(['/c/a.yaml', '/c/b.yaml', '/c/c.yaml', '/c/d.yaml'].map((f) => third.get(f))).toEqual([300, 100, 600, 50]);
  });

  it(`keep the latest ${MAX_FILES} files`, () => {
    const dir = cacheDir();
    const times = kept(dir);
    times.record(new Map(Array.from({ length: MAX_FILES }, (_, i) => [`/old/${i}.yaml`, i])));
    times.record(
      new Map([
        ['/new/a.yaml', 1],
        ['/new/b.yaml', 2],
      ]),
    );
    const next = kept(dir);
    expect([next.get('/old/0.yaml'), next.get('/old/1.yaml'), next.get('/old/2.yaml')]).toEqual([
      undefined,
      undefined,
      2,
    ]);
    expect([next.get(`/old/${MAX_FILES - 1}.yaml`), next.get('/new/a.yaml'), next.get('/new/b.yaml')]).toEqual([
      MAX_FILES - 1,
      1,
      2,
    ]);
  });

  it('are not read from an entry planted or edited in the cache directory (nothing known: the order by size)', () => {
    const dir = cacheDir();
    kept(dir).record(new Map([['/c/a.yaml', 300]]));
    const file = entryFile(dir);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('300', '301'));
    expect(kept(dir).get('/c/a.yaml')).toBeUndefined();
    // Another secret's entry (another user's, or one made by hand) is not read either.
    kept(dir).record(new Map([['/c/a.yaml', 300]]));
    const other = new FinishTimes(
      new DiskCache(dir, 'runs', '.json', ['vitest-adcp-finish-times-v1'], randomBytes(32)),
    );
    expect(other.get('/c/a.yaml')).toBeUndefined();
    expect(kept(dir).get('/c/a.yaml')).toBe(300);
  });

  it('are not read when the entry is not a list of [file, ms] pairs, even authenticated', () => {
    const dir = cacheDir();
    const disk = new DiskCache(dir, 'runs', '.json', ['vitest-adcp-finish-times-v1'], secret);
    for (const entry of [
      '{"/c/a.yaml":300}',
      '[["/c/a.yaml","300"]]',
      '[["/c/a.yaml",300,1]]',
      '[["/c/a.yaml",null]]',
    ]) {
      disk.write(disk.key('finish-times'), entry);
      expect(kept(dir).get('/c/a.yaml'), entry).toBeUndefined();
    }
    disk.write(disk.key('finish-times'), '[["/c/a.yaml",300]]');
    expect(kept(dir).get('/c/a.yaml')).toBe(300);
  });

  it('without a cache directory (cacheDir: false), last only as long as the plugin', () => {
    const times = FinishTimes.in(undefined);
    times.record(new Map([['/c/a.yaml', 300]]));
    expect(times.get('/c/a.yaml')).toBe(300);
    expect(FinishTimes.in(undefined).get('/c/a.yaml')).toBeUndefined();
  });

  it('write nothing for a run that ran no file', () => {
    const dir = cacheDir();
    kept(dir).record(new Map());
    expect(() => readdirSync(join(dir, 'runs'))).toThrow(/ENOENT/);
  });
});
