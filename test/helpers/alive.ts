/**
 * Whether process `pid` still runs (EPERM: it does, as another user's). Shared by the per-run directory's global setup
 * and once-per-run.ts; a module of its own, without a Vitest import, for the setup that runs in the main process.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
