import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import { StateSealer } from '@hashq/crypto';
import { rowsSqlProvider } from '@hashq/database';
import { TenantStoreModule } from '@hashq/jobs';
import { NetGuard } from '@hashq/sources';
import { Module } from '@nestjs/common';

import { BatchesModule } from '../batches/batches.module';
import { DigestSessionsModule } from '../digest-sessions/digest-sessions.module';
import { JobsModule } from '../jobs/jobs.module';
import { MetricsModule } from '../metrics/metrics.module';
import { WebhookDeliverer } from './webhook-deliverer.service';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** Webhook endpoints and the delivery of their events (README "Webhooks"). */
@Module({
  imports: [TenantStoreModule, JobsModule, BatchesModule, DigestSessionsModule, MetricsModule],
  controllers: [WebhooksController],
  providers: [
    WebhooksService,
    WebhookDeliverer,
    rowsSqlProvider(WebhooksRepository),
    // the SSRF guard of HASHQ_ALLOW_HOSTS: the URLs at creation, the addresses at delivery
    {
      provide: NetGuard,
      inject: [HASHQ_CONFIG],
      useFactory: (config: HashqConfig) => new NetGuard(config.allowHosts),
    },
    // seals the endpoints' signing secrets (HASHQ_STATE_KEYS: the first key seals, all open)
    {
      provide: StateSealer,
      inject: [HASHQ_CONFIG],
      useFactory: (config: HashqConfig) => new StateSealer(config.stateKeys),
    },
  ],
})
export class WebhooksModule {}
