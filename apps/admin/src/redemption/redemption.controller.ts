import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentActor, EDITORS, READERS, Roles } from '../auth/access.decorators.js';
import { type Actor } from '../common/actor.js';
import { ApiNotFound, ApiValidationErrors } from '../common/api-docs.js';
import { IdParam } from '../common/id.pipe.js';
import {
  CreateRedemptionBatchDto,
  CreatedRedemptionBatchResponse,
  RedemptionBatchPage,
  RedemptionCodePage,
  RedemptionQuery,
} from './redemption.dto.js';
import { RedemptionService } from './redemption.service.js';

@ApiTags('redemption-codes')
@Controller('api/redemption-batches')
export class RedemptionController {
  constructor(private readonly redemption: RedemptionService) {}

  @Post()
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Generate a batch of redemption codes for balance teams',
    description:
      'The codes, and their CSV, are in this response only: the database keeps their SHA-256 and last four characters.',
  })
  @ApiCreatedResponse({ type: CreatedRedemptionBatchResponse })
  @ApiValidationErrors()
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateRedemptionBatchDto,
  ): Promise<CreatedRedemptionBatchResponse> {
    return this.redemption.create(actor, dto);
  }

  @Get()
  @Roles(...READERS)
  @ApiOperation({ summary: 'Batches, newest first, with how many codes are used' })
  @ApiOkResponse({ type: RedemptionBatchPage })
  @ApiValidationErrors()
  list(@Query() query: RedemptionQuery): Promise<RedemptionBatchPage> {
    return this.redemption.list(query);
  }

  @Get(':id/codes')
  @Roles(...READERS)
  @ApiOperation({ summary: "A batch's codes (last four characters) and who redeemed each" })
  @ApiOkResponse({ type: RedemptionCodePage })
  @ApiNotFound('redemption batch')
  codes(@IdParam() id: number, @Query() query: RedemptionQuery): Promise<RedemptionCodePage> {
    return this.redemption.codes(id, query);
  }
}
