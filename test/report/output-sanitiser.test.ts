/**
 * The output sanitiser and the secret set (issue 20, cases 2 and 3), unit by unit: the end-to-end runs are in
 * test/e2e/hostile-output.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { CredentialResolver } from '../../src/engine/credentials.js';
import { testTitle } from '../../src/model/test-titles.js';
import {
  sanitizeOutput,
  fence,
  neutraliseCommands,
  sanitizeLine,
  scrubSecrets,
  scrubSecretsDeep,
  secretForms,
} from '../../src/model/redact.js';

/** Lines a CI log parser reads as a command. */
const commandLines = (text: string) =>
  text.split(/\r?\n/).filter((line) => /^\s*::/.test(line) || /##(\[|vso\[)/i.test(line));

describe('sanitizeOutput', () => {
  it('neutralises workflow commands at the start of every line, after any leading whitespace', () => {
    const forged = [
      '::error title=forged::pwned',
      'x\n::add-mask::secret',
      'a\n  \t::stop-commands::tok',
      '\u00a0::warning::x',
      'y\r\n::group::z',
      'z\u2028::debug::x',
    ].join('\n');
    const out = sanitizeOutput(forged);
    expect(commandLines(out)).toEqual([]);
    expect(out).toContain('\\u{3a}:error title=forged::pwned');
    expect(out).toContain('\\u{3a}:add-mask::secret');
    // `::` inside a line is text, left alone.
    expect(sanitizeOutput('a::b')).toBe('a::b');
  });

  it('neutralises Azure and legacy commands anywhere in a line', () => {
    const out = sanitizeOutput('x ##vso[task.setvariable variable=a]b ##[error]c ##VSO[x]');
    expect(commandLines(out)).toEqual([]);
    expect(out).toBe('x \\u{23}#vso[task.setvariable variable=a]b \\u{23}#[error]c \\u{23}#VSO[x]');
  });

  it('escapes control characters as before, and is idempotent', () => {
    const text = '\u001b[2J\n::error::x\u009b31m\u202eevil\r::add-mask::y';
    const once = sanitizeOutput(text);
    expect(once).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(sanitizeOutput(once)).toBe(once);
    expect(sanitizeOutput).toBe(sanitizeOutput);
  });

  it('keeps our colour codes where only line starts are neutralised (a coloured diff)', () => {
    expect(neutraliseCommands('\u001b[31m- ::error::x\u001b[39m\n\u001b[2m  ::add-mask::y')).toBe(
      '\u001b[31m- ::error::x\u001b[39m\n\u001b[2m  \\u{3a}:add-mask::y',
    );
  });

  it('fenced agent text and one-line text carry no command either', () => {
    expect(commandLines(fence('a\n::error::x\nb'.repeat(3)))).toEqual([]);
    expect(sanitizeLine('t\n::error::x')).toBe('t\\u{a}\\u{3a}:error::x');
  });

  it('test titles from storyboard YAML go through it', () => {
    const title = testTitle('Forged \u001b[2J\n::error title=x::y', 'sb');
    expect(commandLines(title)).toEqual([]);
    expect(title).toBe('Forged \\u{1b}[2J\n\\u{3a}:error title=x::y (sb)');
  });
});

describe('the secret set', () => {
  const token = 'tok"en\\with-quote';

  it('scrubs every spelling: raw, JSON-escaped once and twice, URL-encoded, \\u-escaped', () => {
    const u = [...token].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const once = JSON.stringify(token).slice(1, -1);
    for (const form of [
      token,
      once,
      JSON.stringify(once).slice(1, -1),
      encodeURIComponent(token),
      new URLSearchParams({ t: token }).toString().slice(2),
      u,
      u.toUpperCase().replace(/\\U/g, '\\u'),
    ]) {
      expect(scrubSecrets(`a ${form} b`, [token]), form).toBe('a [redacted] b');
    }
    expect(secretForms(['abc'])).toEqual([]); // too short to scrub
  });

  it('scrubs JSON text that spells the secret with some characters \\u-escaped (it is parsed), and leaves other JSON text as it was', () => {
    const partly = `{"m":"\\u0074ok\\"en\\\\with-quote", "x": 1}`;
    expect(JSON.parse(partly).m).toBe(token);
    const record = {
      content: [
        { type: 'text', text: partly },
        { type: 'text', text: '{"kept" : "\\u0041s written"}' },
      ],
      [token]: 'key',
    };
    const out = scrubSecretsDeep(record, [token]);
    expect(JSON.stringify(out)).not.toContain('tok');
    expect(JSON.parse(out.content[0]!.text)).toEqual({ m: '[redacted]', x: 1 });
    expect(out.content[1]!.text).toBe('{"kept" : "\\u0041s written"}');
    expect(Object.keys(out)).toEqual(['content', '[redacted]']);
  });

  it('holds the Basic header we build: base64(user:pass) and the whole header value', () => {
    const kit = { auth: { basic: { username: 'kit-user', password: 'kit-pass-1234' }, api_key: 'kit-api-key-1' } };
    const resolver = new CredentialResolver({ defaultToken: 'operator-token-1', testKit: kit as never });
    const b64 = Buffer.from('kit-user:kit-pass-1234').toString('base64');
    const secrets = resolver.secrets();
    expect(secrets).toEqual(
      expect.arrayContaining(['operator-token-1', 'kit-api-key-1', 'kit-pass-1234', b64, `Basic ${b64}`]),
    );
    // A random invalid Basic credential too, as sent.
    const random = resolver.resolve({ type: 'basic', value_strategy: 'random_invalid' });
    expect(random.kind).toBe('basic');
    if (random.kind === 'basic')
      expect(secrets).toContain(Buffer.from(`${random.username}:${random.password}`).toString('base64'));
    expect(scrubSecrets(`echo: Authorization: Basic ${b64}`, secrets)).toBe('echo: Authorization: [redacted]');
  });
});
