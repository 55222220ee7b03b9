/**
 * While a started agent is up and no handler of the run's own listens, SIGINT/SIGTERM exit through `process.exit`:
 * Node's default would end the process without its `exit` event, and that event is what takes a started agent down
 * (agent-process.ts). Used by the bin around its start (cli/start-agent.ts) and by the Jest global setup, whose run
 * has no signal handler of its own (jest/start-agent.cts).
 */

/** Installs the handlers; the function returned removes them. */
export function exitOnSignal(): () => void {
  const handler = (signal: NodeJS.Signals) => process.exit(signal === 'SIGINT' ? 130 : 143);
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
