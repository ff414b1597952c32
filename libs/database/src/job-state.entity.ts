import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * job_states: the serialized hash state of one algorithm of one job at its last checkpoint.
 * A state holds a plaintext tail of the input: it lives in its own bytea column and is never
 * logged or returned by the API.
 */
@Entity({ name: 'job_states' })
export class JobStateEntity {
  @PrimaryColumn({ name: 'job_id', type: 'uuid' })
  jobId: string;

  @PrimaryColumn({ type: 'text' })
  algorithm: string;

  @Column({ type: 'bytea' })
  state: Buffer;
}
