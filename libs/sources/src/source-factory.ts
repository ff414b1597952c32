import { FileRoots } from './file-roots.js';
import { FileSource } from './file-source.js';
import { SourceError } from './source-error.js';
import type { Source } from './source.js';

/** A normalized source as stored in jobs.source, e.g. {"type":"file","path":"/abs"}. */
export interface SourceSpec {
  type: string;
  [field: string]: unknown;
}

/** Builds the Source for a stored spec; new source types register here. */
export class SourceFactory {
  constructor(private readonly fileRoots: FileRoots) {}

  create(spec: SourceSpec): Source {
    switch (spec.type) {
      case 'file':
        if (typeof spec.path !== 'string') {
          throw new SourceError('SOURCE_UNSUPPORTED', 'file source needs a path', { source: spec });
        }
        return new FileSource(spec.path, this.fileRoots);
      default:
        throw new SourceError('SOURCE_UNSUPPORTED', `unsupported source type: ${String(spec.type)}`, { source: spec });
    }
  }
}
