import { isAbsolute, relative, resolve } from 'node:path';

import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';

import { ApiError } from '../common/api-error';
import { ApiKeysService, isOperator, type KeyView } from './api-keys.service';
import { CreateKeyDto, CreateTenantDto } from './keys.dto';
import { CurrentPrincipal, type Principal, RequireScope } from './principal';

/**
 * Keys (admin scope). The operator (an admin key of the default tenant) manages every tenant's
 * keys; an admin key of another tenant its own tenant's. Rotation: create the new key, move the
 * clients, revoke the old one; both work meanwhile.
 */
@ApiTags('keys')
@Controller('v1/keys')
@RequireScope('admin')
export class KeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @ApiCreatedResponse({ description: 'The key; `key` (hq_<id>_<secret>) is shown this once only' })
  @ApiForbiddenResponse({ description: 'SCOPE_MISSING' })
  @ApiNotFoundResponse({ description: 'TENANT_NOT_FOUND (or another tenant, for a tenant admin)' })
  create(@CurrentPrincipal() caller: Principal, @Body() dto: CreateKeyDto): Promise<KeyView> {
    return this.keys.create(caller, {
      tenantId: dto.tenant,
      name: dto.name,
      scopes: dto.scopes,
      expiresAt: dto.expiresAt === undefined ? undefined : new Date(dto.expiresAt),
    });
  }

  @Get()
  @ApiQuery({ name: 'tenant', required: false })
  @ApiOkResponse({ description: 'Keys without their secrets, revoked ones included' })
  async list(
    @CurrentPrincipal() caller: Principal,
    @Query('tenant') tenant?: string,
  ): Promise<{ items: KeyView[] }> {
    return { items: await this.keys.list(caller, tenant) };
  }

  @Delete(':id')
  @ApiOkResponse({ description: 'The key, revoked (at once here, within 5 s on other instances)' })
  @ApiNotFoundResponse({ description: 'KEY_NOT_FOUND' })
  revoke(@CurrentPrincipal() caller: Principal, @Param('id') id: string): Promise<KeyView> {
    return this.keys.revoke(caller, id);
  }
}

/** Tenants: the operator only. */
@ApiTags('keys')
@Controller('v1/tenants')
@RequireScope('admin')
export class TenantsController {
  constructor(
    private readonly keys: ApiKeysService,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @ApiCreatedResponse({ description: 'The tenant' })
  @ApiForbiddenResponse({ description: 'SCOPE_MISSING: not the operator' })
  async create(@CurrentPrincipal() caller: Principal, @Body() dto: CreateTenantDto) {
    operatorOnly(caller);
    const outside = (dto.fileRoots ?? []).filter((root) => !this.withinRoots(root));
    if (outside.length > 0) {
      throw ApiError.validation('fileRoots must be absolute folders inside HASHQ_FILE_ROOTS', {
        field: 'fileRoots',
        outside,
      });
    }
    return this.keys.createTenant({
      ...dto,
      fileRoots: dto.fileRoots?.map((root) => resolve(root)),
    });
  }

  @Get()
  @ApiOkResponse({ description: 'Every tenant with its settings' })
  async list(@CurrentPrincipal() caller: Principal) {
    operatorOnly(caller);
    return { items: await this.keys.listTenants() };
  }

  private withinRoots(root: string): boolean {
    if (!isAbsolute(root)) return false;
    return this.config.fileRoots.some((allowed) => {
      const path = relative(allowed, resolve(root));
      return path === '' || (!path.startsWith('..') && !isAbsolute(path));
    });
  }
}

function operatorOnly(caller: Principal): void {
  if (!isOperator(caller)) {
    throw new ApiError(
      HttpStatus.FORBIDDEN,
      'SCOPE_MISSING',
      'tenants are managed by an admin key of the default tenant',
      { required: 'admin' },
    );
  }
}
