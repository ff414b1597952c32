// Types only, from files of @hashq/jobs that import nothing: no import cycle with @hashq/jobs.
import type { DigestValue } from '@hashq/jobs/digest-value';
import type { JobOptions } from '@hashq/jobs/job-options';
import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

import { bigintAsNumber } from './bigint.transformer';

export type JobStatusValue = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';

/** jobs: one hashing request; PostgreSQL is the system of record (see migrations/). */
@Entity({ name: 'jobs' })
@Index('jobs_created_at_id_idx', ['createdAt', 'id'])
@Index('jobs_status_idx', ['status'])
export class JobEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  status: JobStatusValue;

  @Column({ type: 'jsonb' })
  source: { type: string; [field: string]: unknown };

  @Column({ type: 'text', array: true })
  algorithms: string[];

  @Column({ type: 'jsonb', default: () => "'{}'" })
  options: JobOptions;

  /** The owner (tenants.id); `default` for local use without keys. */
  @Column({ name: 'tenant_id', type: 'text', default: 'default' })
  tenantId: string;

  /**
   * Admission under the tenant's max_running_jobs (docs/tenants.md): null when the tenant had no
   * limit at submission, 'held' while waiting for a slot (not in BullMQ), 'admitted' once it has one.
   */
  @Column({ type: 'text', nullable: true })
  admission: 'held' | 'admitted' | null;

  /** Unique per tenant (jobs_tenant_idempotency_key_key). */
  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  @Column({ name: 'request_hash', type: 'text', nullable: true })
  requestHash: string | null;

  @Column({ type: 'bigint', default: 0, transformer: bigintAsNumber })
  fence: number;

  @Column({ name: 'lease_owner', type: 'text', nullable: true })
  leaseOwner: string | null;

  @Column({ name: 'lease_expires_at', type: 'timestamptz', nullable: true })
  leaseExpiresAt: Date | null;

  @Column({ name: 'total_bytes', type: 'bigint', nullable: true, transformer: bigintAsNumber })
  totalBytes: number | null;

  @Column({ name: 'bytes_done', type: 'bigint', default: 0, transformer: bigintAsNumber })
  bytesDone: number;

  @Column({ name: 'bytes_read', type: 'bigint', default: 0, transformer: bigintAsNumber })
  bytesRead: number;

  @Column({ name: 'checkpoint_offset', type: 'bigint', default: 0, transformer: bigintAsNumber })
  checkpointOffset: number;

  /** Fence of the lease that wrote the checkpoint: part of what its sealed states are bound to. */
  @Column({ name: 'checkpoint_fence', type: 'bigint', nullable: true, transformer: bigintAsNumber })
  checkpointFence: number | null;

  @Column({ name: 'source_version', type: 'jsonb', nullable: true })
  sourceVersion: Record<string, string | number | null> | null;

  @Column({ name: 'checkpointed_at', type: 'timestamptz', nullable: true })
  checkpointedAt: Date | null;

  @Column({ type: 'int', default: 0 })
  attempts: number;

  @Column({ type: 'int', default: 0 })
  resumes: number;

  @Column({ name: 'cancel_requested', type: 'boolean', default: false })
  cancelRequested: boolean;

  @Column({ type: 'jsonb', nullable: true })
  digests: Record<string, DigestValue> | null;

  @Column({ name: 'error_code', type: 'text', nullable: true })
  errorCode: string | null;

  @Column({ name: 'error_message', type: 'text', nullable: true })
  errorMessage: string | null;

  @Column({ name: 'error_details', type: 'jsonb', nullable: true })
  errorDetails: unknown;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}
