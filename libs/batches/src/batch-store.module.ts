import { Module } from '@nestjs/common';

import { BatchItemsRepository } from './batch-items.repository';
import { BatchesRepository } from './batches.repository';

/** The batches and batch_items repositories; needs the TypeORM connection of DatabaseModule. */
@Module({
  providers: [BatchesRepository, BatchItemsRepository],
  exports: [BatchesRepository, BatchItemsRepository],
})
export class BatchStoreModule {}
