/**
 * Prometheus metric names shared by the api and the worker, so dashboards do not depend on
 * which process exposes a metric.
 */
export const METRIC_NAMES = {
  jobsByStatus: 'hashq_jobs',
  bytesHashed: 'hashq_bytes_hashed',
  bytesRead: 'hashq_bytes_read',
  queueDepth: 'hashq_queue_jobs',
  checkpointSeconds: 'hashq_checkpoint_duration_seconds',
  /** Worker only: a counter per worker process (the api's hashq_bytes_hashed is a sum from PostgreSQL). */
  workerBytesHashed: 'hashq_worker_bytes_hashed_total',
  /** API only, from PostgreSQL at scrape time: webhook deliveries by status, the oldest pending. */
  webhookDeliveries: 'hashq_webhook_deliveries',
  webhookOldestPendingSeconds: 'hashq_webhook_oldest_pending_seconds',
} as const;

/** Buckets of the checkpoint latency histogram (one fenced transaction: update + state upserts). */
export const CHECKPOINT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
