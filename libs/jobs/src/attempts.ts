/**
 * The crash-loop cap. `jobs.attempts` counts the leases a job has taken (every start or resume by
 * a worker, a graceful hand-back on shutdown included). A job that crashes its worker every time
 * would otherwise run forever: BullMQ gives up after its stalled limit, but the queue reconciler
 * re-adds the job once its lease is dead. With MAX_JOB_ATTEMPTS leases used, the job ends 'failed'
 * with ATTEMPTS_EXHAUSTED instead: when a worker would lease it again, or when the reconciler finds
 * it with a dead lease and no live BullMQ job (it is then not re-enqueued).
 */
export const ATTEMPTS_EXHAUSTED = 'ATTEMPTS_EXHAUSTED';

/**
 * The SET list of the UPDATE that ends a job ATTEMPTS_EXHAUSTED (one implementation for the worker's
 * lease and the reconciler). `maxParam` is the placeholder of the cap, e.g. `$3`. The right-hand
 * sides read the row as it was, so the details keep the error of the last attempt, if it recorded
 * one. The fence moves on (a stale holder can write nothing after this); the checkpoint offset is
 * kept (bytes_done goes back to it, as for a cancel) and the states are deleted (the trigger of a
 * job that ends, see migrations/).
 */
export function attemptsExhaustedAssignments(maxParam: string): string {
  return `status = 'failed', fence = fence + 1, error_code = '${ATTEMPTS_EXHAUSTED}',
       error_message = 'the job was started ' || attempts || ' times without finishing (MAX_JOB_ATTEMPTS = ' || ${maxParam}::int || ')',
       error_details = jsonb_build_object('attempts', attempts, 'maxAttempts', ${maxParam}::int,
         'checkpointOffset', checkpoint_offset, 'lastErrorCode', error_code),
       bytes_done = checkpoint_offset, finished_at = now(), lease_owner = NULL, lease_expires_at = NULL, updated_at = now()`;
}
