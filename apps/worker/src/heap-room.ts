import { setFlagsFromString } from 'node:v8';

/**
 * V8's heap growing factor in the worker: a full GC once the old space has grown this much over
 * what the last one kept. V8's own is up to 4x on a machine with GiBs: a directory batch then
 * carries ~60 MiB of dead promoted rows, and its peak grows with the batch; 60 % keeps it flat.
 */
const FILE_PERCENT = 60;
/**
 * While remote items are read: with thousands of short responses churning Buffers, V8 marks again
 * right after each full GC when that GC left less than ~30 MB of room, and 60 % of the worker's
 * ~35 MB is 21: an S3 batch ran a full GC every 130 ms (docs/batches.md, "Memory"). One long
 * download does not (a job's: 60 % stays).
 */
const REMOTE_PERCENT = 150;

let remoteRuns = 0;
/** The factor is this module's to change: set by initHeapGrowing, not named on the command line. */
let managed = false;

/** Sets the worker's factor, unless its command line names one. Called once, before anything runs. */
export function initHeapGrowing(): void {
  managed = !process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent'));
  if (managed) setFlagsFromString(`--heap-growing-percent=${FILE_PERCENT}`);
}

/**
 * Runs `read` (remote items read) with the room REMOTE_PERCENT gives; the factor goes back once
 * no such read is under way. V8 reads the flag at each full GC. Outside a worker that called
 * initHeapGrowing (a test's process), it only runs `read`.
 */
export async function withRemoteHeapRoom<T>(read: () => Promise<T>): Promise<T> {
  if (managed && remoteRuns++ === 0) setFlagsFromString(`--heap-growing-percent=${REMOTE_PERCENT}`);
  try {
    return await read();
  } finally {
    if (managed && --remoteRuns === 0) setFlagsFromString(`--heap-growing-percent=${FILE_PERCENT}`);
  }
}
