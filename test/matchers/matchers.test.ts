/**
 * The AdCP matchers against the real fixture agent: pass, fail, `.not` pass,
 * `.not` fail, with the failure messages pinned (agent URL normalised).
 */
import { describe, expect, inject, it } from 'vitest';
import '../../src/matchers/index.js';
import { failureOf } from '../helpers/matcher-failure.js';

const origin = () => inject('agentOrigin');
const url = (behaviours?: string) => (behaviours ? `${origin()}/x/${behaviours}/mcp` : inject('agentUrl'));

describe('toRejectUnauthenticated', () => {
  it('passes when the agent refuses a call without credentials', async () => {
    await expect(url()).toRejectUnauthenticated();
  });

  it('over A2A too (option protocol)', async () => {
    await expect(`${origin()}/a2a`).toRejectUnauthenticated({ protocol: 'a2a' });
    await expect(`${origin()}/x/missing_auth_check/a2a`).not.toRejectUnauthenticated({ protocol: 'a2a' });
  });

  it('fails when the agent serves protected tasks without checking credentials', async () => {
    expect(await failureOf(() => expect(url('missing_auth_check')).toRejectUnauthenticated({ task: 'list_creatives' })))
      .toMatchInlineSnapshot(`
      "expect(agentUrl).toRejectUnauthenticated(options)

      Expected an unauthenticated list_creatives call to be refused with "HTTP 401 or 403"
      Received: "HTTP 200"

      An agent that answers protected tasks without credentials is not checking them."
    `);
  });

  it('says the agent has no such task, instead of blaming its auth, when the task does not exist', async () => {
    expect(
      await failureOf(() =>
        expect(url('missing_auth_check+without@list_creatives')).toRejectUnauthenticated({ task: 'list_creatives' }),
      ),
    ).toMatchInlineSnapshot(`
      "expect(agentUrl).toRejectUnauthenticated(options)

      Expected an unauthenticated list_creatives call to be refused with "HTTP 401 or 403"
      Received: "HTTP 200: the agent has no task list_creatives (pick a task it serves with { task })""
    `);
  });

  it('.not passes on an agent that serves the call', async () => {
    await expect(url('missing_auth_check')).not.toRejectUnauthenticated();
  });

  it('.not fails on an agent that refuses it', async () => {
    expect(await failureOf(() => expect(url()).not.toRejectUnauthenticated())).toMatchInlineSnapshot(`
      "expect(agentUrl).not.toRejectUnauthenticated(options)

      Expected the agent to serve an unauthenticated list_creatives call, but it refused it: "HTTP 401""
    `);
  });

  it('rejects a received value that is not a URL, saying what it wants', async () => {
    expect(() => expect(42).toRejectUnauthenticated()).toThrow(
      /expected the agent's URL \(a http\(s\) string\), received number/,
    );
  });
});

describe('toExposeWwwAuthenticate', () => {
  it('passes on a 401 with the header, and checks the offered scheme', async () => {
    await expect(url()).toExposeWwwAuthenticate();
    await expect(url()).toExposeWwwAuthenticate({ scheme: 'Bearer' });
    await expect(url()).toExposeWwwAuthenticate({ scheme: 'basic' });
  });

  it('fails on a 401 without the header', async () => {
    expect(await failureOf(() => expect(url('no_www_authenticate')).toExposeWwwAuthenticate({ scheme: 'Bearer' })))
      .toMatchInlineSnapshot(`
      "expect(agentUrl).toExposeWwwAuthenticate(options)

      Expected the unauthenticated list_creatives call to get "401 with WWW-Authenticate offering Bearer"
      Received: "401 with no WWW-Authenticate header"

      Clients learn how to authenticate from this header (RFC 6750 §3, e.g. Bearer realm="<agent url>")."
    `);
  });

  it('fails when the scheme is not offered, and when there is no 401 at all', async () => {
    expect(await failureOf(() => expect(url()).toExposeWwwAuthenticate({ scheme: 'Negotiate' }))).toMatch(
      /to get "401 with WWW-Authenticate offering Negotiate"\nReceived: "401 with WWW-Authenticate: Bearer/,
    );
    expect(await failureOf(() => expect(url('missing_auth_check')).toExposeWwwAuthenticate())).toMatch(
      /Received: "HTTP 200"/,
    );
  });

  it('.not passes without the header and fails with it', async () => {
    await expect(url('no_www_authenticate')).not.toExposeWwwAuthenticate();
    expect(await failureOf(() => expect(url()).not.toExposeWwwAuthenticate())).toMatch(
      /Expected the unauthenticated list_creatives call not to get "401 with WWW-Authenticate"\nReceived: "401 with WWW-Authenticate: Bearer realm=/,
    );
  });
});
