/**
 * Global setup: one fixture agent (real MCP server on 127.0.0.1, ephemeral
 * port) for the whole test run; stopped after. Tests read its URL with
 * `inject('agentUrl')`; misbehaving endpoints are `<origin>/x/<behaviours>/mcp`.
 */
import type { TestProject } from 'vitest/node';
import { startFixtureAgent } from '../../fixtures/agent/server.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    agentUrl: string;
    agentOrigin: string;
  }
}

export default async function setup(project: TestProject) {
  const agent = await startFixtureAgent();
  project.provide('agentUrl', agent.url);
  project.provide('agentOrigin', agent.origin);
  return async () => {
    await agent.close();
  };
}
