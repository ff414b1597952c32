/**
 * The API as a child process (node dist/apps/api/main.js), for tests that kill it (SIGKILL) or run
 * several instances; its JSON log lines are kept as a worker's are (WorkerProcess). Needs
 * `npm run build` first (npm test does it).
 *
 *   const api = await startApiProcess(env.env);   // on a free port of 127.0.0.1
 *   await fetch(`${api.url}/health`);
 *   api.process.kill('SIGKILL');
 */
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';

import { REPO_ROOT, WorkerProcess } from './worker-process';

export const API_MAIN =
  process.env.HASHQ_TEST_API_MAIN ?? join(REPO_ROOT, 'dist', 'apps', 'api', 'main.js');

export interface ApiProcess {
  process: WorkerProcess;
  url: string;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts an API instance with `env` (a TestEnv's variables and overrides) and waits until it listens. */
export async function startApiProcess(env: Record<string, string>): Promise<ApiProcess> {
  const port = await freePort();
  const api = new WorkerProcess({ ...env, PORT: String(port), LOG_LEVEL: 'info' }, API_MAIN);
  await api.waitForLog((line) => line.msg === 'hashq api listening');
  return { process: api, url: `http://127.0.0.1:${port}` };
}

/** Requests an instance answered, from its request log lines (e.g. 'PATCH' with status 204). */
export function answered(api: ApiProcess, method: string, status: number): number {
  return api.process.lines.filter(
    (line) => line.msg === 'request' && line.method === method && line.status === status,
  ).length;
}
