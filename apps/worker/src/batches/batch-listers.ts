import type { LeasedBatch } from '@hashq/batches/batches.repository';
import { DirectoryLister } from '@hashq/batches/listing/directory-lister';
import type { Lister } from '@hashq/batches/listing/types';
import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import { FileRoots, SourceError } from '@hashq/sources';
import { Inject, Injectable } from '@nestjs/common';

/** The Lister of a batch's source (see libs/batches/src/listing). */
@Injectable()
export class BatchListers {
  private readonly roots: FileRoots;

  constructor(@Inject(HASHQ_CONFIG) config: HashqConfig) {
    this.roots = new FileRoots(config.fileRoots);
  }

  create(batch: LeasedBatch): Lister {
    const source = batch.source;
    switch (source.type) {
      case 'directory':
        return new DirectoryLister({
          roots: this.roots,
          path: source.path as string,
          recursive: source.recursive as boolean,
          include: source.include as string | undefined,
        });
      default:
        throw new SourceError('SOURCE_UNSUPPORTED', `unsupported batch source ${source.type}`);
    }
  }
}
