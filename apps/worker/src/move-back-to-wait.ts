import { type Job, WaitingError } from 'bullmq';

/**
 * Back to 'wait' in BullMQ right away (no stall timeout), e.g. when this worker drains: another
 * worker continues the job (from its checkpoint). Throws WaitingError, which tells BullMQ the job
 * was moved by hand.
 */
export async function moveBackToWait(job: Job, token: string | undefined): Promise<never> {
  await job.moveToWait(token);
  throw new WaitingError();
}
