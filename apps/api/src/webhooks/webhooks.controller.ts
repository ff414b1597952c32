import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';

import { CurrentPrincipal, type Principal, RequireScope } from '../auth/principal';
import { CreateWebhookDto } from './webhooks.dto';
import {
  type WebhookDeliveryView,
  type WebhookEndpointView,
  WebhooksService,
} from './webhooks.service';

const ERROR_SHAPE = 'Body: { "error": { "code", "message", "details" } }';

/**
 * A tenant's webhook endpoints (admin scope: they are the tenant's settings, like its keys). Each
 * event is POSTed signed as Standard Webhooks specifies; README "Webhooks".
 */
@ApiTags('webhooks')
@Controller('v1/webhooks')
@RequireScope('admin')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @ApiCreatedResponse({ description: 'The endpoint; `secret` (whsec_…) is shown this once only' })
  @ApiBadRequestResponse({ description: `VALIDATION_FAILED, INVALID_WEBHOOK_URL. ${ERROR_SHAPE}` })
  @ApiForbiddenResponse({
    description: `SOURCE_ADDRESS_FORBIDDEN (not a global unicast address), SOURCE_NOT_ALLOWED (the tenant's allowed_hosts). ${ERROR_SHAPE}`,
  })
  @ApiTooManyRequestsResponse({ description: `WEBHOOK_LIMIT_REACHED. ${ERROR_SHAPE}` })
  create(
    @CurrentPrincipal() caller: Principal,
    @Body() dto: CreateWebhookDto,
  ): Promise<WebhookEndpointView> {
    return this.webhooks.create(caller.tenantId, { url: dto.url, events: dto.events });
  }

  @Get()
  @ApiOkResponse({ description: "The caller's tenant's endpoints, without their secrets" })
  async list(@CurrentPrincipal() caller: Principal): Promise<{ items: WebhookEndpointView[] }> {
    return { items: await this.webhooks.list(caller.tenantId) };
  }

  @Get(':id')
  @ApiOkResponse({ description: 'The endpoint, without its secret' })
  @ApiNotFoundResponse({ description: `WEBHOOK_NOT_FOUND (also another tenant's). ${ERROR_SHAPE}` })
  get(
    @CurrentPrincipal() caller: Principal,
    @Param('id') id: string,
  ): Promise<WebhookEndpointView> {
    return this.webhooks.get(caller.tenantId, id);
  }

  @Get(':id/deliveries')
  @ApiOkResponse({ description: "The endpoint's latest 100 deliveries, newest first" })
  @ApiNotFoundResponse({ description: `WEBHOOK_NOT_FOUND. ${ERROR_SHAPE}` })
  async deliveries(
    @CurrentPrincipal() caller: Principal,
    @Param('id') id: string,
  ): Promise<{ items: WebhookDeliveryView[] }> {
    return { items: await this.webhooks.deliveries(caller.tenantId, id) };
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'Deleted, with its deliveries (pending ones are not sent)' })
  @ApiNotFoundResponse({ description: `WEBHOOK_NOT_FOUND. ${ERROR_SHAPE}` })
  delete(@CurrentPrincipal() caller: Principal, @Param('id') id: string): Promise<void> {
    return this.webhooks.delete(caller.tenantId, id);
  }
}
