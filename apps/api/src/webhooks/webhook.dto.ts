import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, ArrayUnique, IsArray, IsIn, IsString, MaxLength } from 'class-validator';
import { WEBHOOK_KINDS, WEBHOOK_URL_MAX_CHARS, WebhookKind } from '@parley/webhooks';

export class CreateWebhookDto {
  @ApiProperty({
    description:
      'where deliveries are POSTed: http(s), no credentials; its host must be public (not loopback, link-local or ' +
      'private) unless the server sets WEBHOOKS_ALLOW_PRIVATE_URLS=true',
    example: 'https://app.example.com/parley/webhooks',
    maxLength: WEBHOOK_URL_MAX_CHARS,
  })
  @IsString()
  @MaxLength(WEBHOOK_URL_MAX_CHARS)
  url!: string;

  @ApiProperty({
    enum: WEBHOOK_KINDS,
    isArray: true,
    minItems: 1,
    maxItems: WEBHOOK_KINDS.length,
    uniqueItems: true,
    description: 'the kinds to deliver (at least one, each once)',
  })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayUnique()
  @ArrayMaxSize(WEBHOOK_KINDS.length)
  @IsIn(WEBHOOK_KINDS, { each: true })
  events!: WebhookKind[];
}

export class WebhookDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() url!: string;
  @ApiProperty({ enum: WEBHOOK_KINDS, isArray: true }) events!: WebhookKind[];
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'when it was disabled after a delivery failed every try; null: enabled',
  })
  disabledAt!: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'why it was disabled (the last error)' })
  disabledReason!: string | null;
  @ApiProperty({ description: 'deliveries waiting to be sent or retried' }) pendingDeliveries!: number;
}

export class CreatedWebhookDto extends WebhookDto {
  @ApiProperty({
    description: 'the signing secret (Standard Webhooks, `whsec_…`): shown only here, keep it to verify deliveries',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret!: string;
}

export class WebhookListDto {
  @ApiProperty({ type: [WebhookDto] }) items!: WebhookDto[];
}
