import { describe, expect, it } from 'vitest';
import {
  authorizationServerMetadataUrl,
  protectedResourceMetadataUrl,
  refuseAgentSuppliedUrl,
} from '../../src/transport/probe.js';

describe('well-known URLs', () => {
  it('insert the well-known segment between origin and path (RFC 9728 §3.1, RFC 8414 §3.1)', () => {
    expect(protectedResourceMetadataUrl('https://agent.example/api/mcp/')).toBe(
      'https://agent.example/.well-known/oauth-protected-resource/api/mcp',
    );
    expect(protectedResourceMetadataUrl('https://agent.example/')).toBe(
      'https://agent.example/.well-known/oauth-protected-resource',
    );
    expect(authorizationServerMetadataUrl('https://auth.example/tenant1')).toBe(
      'https://auth.example/.well-known/oauth-authorization-server/tenant1',
    );
    expect(authorizationServerMetadataUrl('https://auth.example')).toBe(
      'https://auth.example/.well-known/oauth-authorization-server',
    );
  });
});

describe('URLs the agent supplies (SSRF guard)', () => {
  const agent = 'http://127.0.0.1:3000/mcp';
  it('allows the agent origin itself and public https', () => {
    expect(refuseAgentSuppliedUrl('http://127.0.0.1:3000/oauth', agent)).toBeUndefined();
    expect(refuseAgentSuppliedUrl('https://auth.example.com', agent)).toBeUndefined();
  });
  it.each([
    ['http://auth.example.com', 'is not https'],
    ['https://localhost:8443', 'loopback name'],
    ['https://127.0.0.2', 'is a loopback address'],
    ['https://10.1.2.3', 'is a private address (RFC 1918, 10.0.0.0/8)'],
    ['https://172.20.0.1', 'is a private address (RFC 1918, 172.16.0.0/12)'],
    ['https://192.168.1.1', 'is a private address (RFC 1918, 192.168.0.0/16)'],
    ['https://169.254.169.254', 'is a link-local address'],
    ['https://[::1]', 'is the IPv6 loopback address'],
    ['https://[fd00::1]', 'is an IPv6 unique local address'],
    ['https://100.64.0.1', 'is a carrier-grade NAT address'],
    ['https://[::ffff:10.0.0.1]', 'is an IPv4-mapped IPv6 address of 10.0.0.1'],
    ['not a url', 'is not a URL'],
  ])('refuses %s', (target, why) => {
    expect(refuseAgentSuppliedUrl(target, agent)).toContain(why);
  });
  it('allowHttp (local development) lifts the scheme and address rules', () => {
    expect(refuseAgentSuppliedUrl('http://10.1.2.3/oauth', agent, true)).toBeUndefined();
    expect(refuseAgentSuppliedUrl('ftp://10.1.2.3/oauth', agent, true)).toContain('is not http(s)');
  });
});
