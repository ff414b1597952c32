import { rowsSqlProvider } from '@hashq/database';
import { TenantStoreModule } from '@hashq/jobs';
import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';

import { ApiKeysService } from './api-keys.service';
import { AuthGuard } from './auth.guard';
import { KeyVerifier } from './key-verifier';
import { KeysController, TenantsController } from './keys.controller';
import { KeysRepository } from './keys.repository';

/** API keys, tenants and the global AuthGuard (README "Keys and scopes"). */
@Global()
@Module({
  imports: [TenantStoreModule],
  controllers: [KeysController, TenantsController],
  providers: [
    rowsSqlProvider(KeysRepository),
    KeyVerifier,
    ApiKeysService,
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [KeyVerifier, TenantStoreModule],
})
export class AuthModule {}
