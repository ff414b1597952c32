import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';

/**
 * A provider that runs `run` every `periodMs()` from application bootstrap until the module is
 * destroyed. A failed round is logged as a warning (`failure`) and retried at the next round.
 */
export abstract class PeriodicTask implements OnApplicationBootstrap, OnModuleDestroy {
  private timer?: NodeJS.Timeout;

  /** Whether bootstrap waits for a first round instead of the first period. */
  protected readonly runAtBootstrap: boolean = false;

  constructor(protected readonly logger: Logger) {}

  protected abstract periodMs(): number;

  protected abstract run(): Promise<void>;

  /** The warning logged when a round fails, with the fields that go with it. */
  protected abstract failure(): { message: string; fields?: object };

  async onApplicationBootstrap(): Promise<void> {
    if (this.runAtBootstrap) await this.round();
    this.timer = setInterval(() => void this.round(), this.periodMs());
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** One round: never rejects. */
  protected async round(): Promise<void> {
    try {
      await this.run();
    } catch (err) {
      const { message, fields } = this.failure();
      this.logger.warn({ ...fields, err: (err as Error).message }, message);
    }
  }
}
