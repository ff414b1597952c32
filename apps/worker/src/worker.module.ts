import { Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { FileRoots, SourceFactory } from '@hashq/sources';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { CheckpointStore } from './checkpoint-store.js';
import { HASH_QUEUE, HashProcessor } from './hash.processor.js';
import { ROOT_LOGGER } from './logger.js';
import { WORKER_CONFIG, type WorkerConfig } from './worker-config.js';

/** ioredis options from REDIS_URL; BullMQ workers need maxRetriesPerRequest: null (blocking commands). */
export function redisConnection(redisUrl: string) {
  const url = new URL(redisUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    tls: url.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}

/** The worker talks SQL only (fenced UPDATEs), so its DataSource needs no entities. */
class WorkerDatabase implements OnApplicationShutdown {
  constructor(readonly dataSource: DataSource) {}

  static async connect(config: WorkerConfig): Promise<WorkerDatabase> {
    const dataSource = new DataSource({
      type: 'postgres',
      url: config.databaseUrl,
      schema: config.databaseSchema,
      synchronize: false,
      extra: { max: config.concurrency * 2 + 1 },
    });
    return new WorkerDatabase(await dataSource.initialize());
  }

  // After beforeApplicationShutdown: the jobs have released their leases by now.
  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

@Module({})
export class WorkerModule {
  static register(config: WorkerConfig, log: Logger): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        BullModule.forRoot({ connection: redisConnection(config.redisUrl), prefix: config.queuePrefix }),
        BullModule.registerQueue({ name: HASH_QUEUE }),
      ],
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        { provide: ROOT_LOGGER, useValue: log },
        { provide: WorkerDatabase, useFactory: () => WorkerDatabase.connect(config) },
        {
          provide: CheckpointStore,
          inject: [WorkerDatabase],
          useFactory: (db: WorkerDatabase) => new CheckpointStore(db.dataSource, config.databaseSchema, config.leaseSeconds),
        },
        { provide: SourceFactory, useFactory: () => new SourceFactory(FileRoots.parse(config.fileRoots)) },
        HashProcessor,
      ],
    };
  }
}
