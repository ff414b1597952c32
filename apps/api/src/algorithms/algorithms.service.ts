import { type AlgorithmInfo, algorithms, findAlgorithm } from '@hashq/native';
import { Injectable } from '@nestjs/common';

/** The algorithms linked into the native addon (fixed for the life of the process). */
@Injectable()
export class AlgorithmsService {
  private readonly all: readonly AlgorithmInfo[] = algorithms();

  list(): readonly AlgorithmInfo[] {
    return this.all;
  }

  /** Exact names first; the addon also accepts a different letter case. */
  find(name: string): AlgorithmInfo | undefined {
    return findAlgorithm(name);
  }
}
