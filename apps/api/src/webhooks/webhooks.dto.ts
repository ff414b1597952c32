import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsString, MaxLength } from 'class-validator';

import { WEBHOOK_EVENTS, type WebhookEvent } from './webhooks.repository';

export class CreateWebhookDto {
  @ApiProperty({
    description: 'http(s) URL the events are POSTed to',
    example: 'https://ci.example.com/hashq',
  })
  @IsString()
  @MaxLength(2048)
  url: string;

  @ApiProperty({ enum: WEBHOOK_EVENTS, isArray: true, example: ['session.completed'] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENTS.length)
  @IsIn(WEBHOOK_EVENTS as unknown as string[], { each: true })
  events: WebhookEvent[];
}
