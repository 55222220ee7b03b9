/**
 * A matcher's failure message as a snapshot can hold it: the fixture agent's origin (a random port) as `<agent>`,
 * colours stripped. Fails the test when the assertion passes.
 */
import { inject } from 'vitest';

export async function failureOf(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    return (error as Error).message.replaceAll(inject('agentOrigin'), '<agent>').replace(/\x1b\[[0-9;]*m/g, '');
  }
  throw new Error('expected the assertion to fail');
}
