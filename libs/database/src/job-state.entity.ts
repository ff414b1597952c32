import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * job_states: the serialized hash state of one algorithm of one unfinished job at its last
 * checkpoint. A state holds a plaintext tail of the input: it is stored sealed (StateSealer,
 * @hashq/crypto), never logged or returned by the API, and deleted when its job ends.
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
