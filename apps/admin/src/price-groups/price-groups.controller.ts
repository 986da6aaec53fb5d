import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ApiError } from '@switchyard/contracts';
import { CurrentActor, EDITORS, READERS, Roles } from '../auth/access.decorators.js';
import { type Actor } from '../common/actor.js';
import { ApiErrorResponse, ApiNotFound, ApiValidationErrors } from '../common/api-docs.js';
import { GROUP_PATTERN } from '../common/validators.js';
import { PriceGroupList, PriceGroupResponse, SetPriceGroupDto } from './price-groups.dto.js';
import { PriceGroupsService } from './price-groups.service.js';

function groupName(name: string): string {
  if (GROUP_PATTERN.test(name)) return name;
  const message = 'name must be 1 to 64 letters, digits, _ . or -';
  throw new ApiError('validation_failed', message, [{ field: 'name', message }]);
}

@ApiTags('price-groups')
@Controller('api/price-groups')
export class PriceGroupsController {
  constructor(private readonly groups: PriceGroupsService) {}

  @Get()
  @Roles(...READERS)
  @ApiOperation({ summary: 'Every price group with its multiplier (`default` always among them)' })
  @ApiOkResponse({ type: PriceGroupList })
  list(): Promise<PriceGroupList> {
    return this.groups.list();
  }

  @Put(':name')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Create a price group or change its multiplier',
    description:
      'The multiplier is a decimal ratio (`"0.8"`, `1.25`), stored exactly in parts per million; a cost under it is `ceil(cost × ppm / 1e6)`. Publishes `price-group.changed`.',
  })
  @ApiOkResponse({ type: PriceGroupResponse })
  @ApiValidationErrors()
  set(
    @CurrentActor() actor: Actor,
    @Param('name') name: string,
    @Body() dto: SetPriceGroupDto,
  ): Promise<PriceGroupResponse> {
    return this.groups.set(actor, groupName(name), dto);
  }

  @Delete(':name')
  @HttpCode(204)
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Delete a price group',
    description: 'Refused (409) for `default` and while a team uses it.',
  })
  @ApiNoContentResponse()
  @ApiNotFound('price group')
  @ApiConflictResponse({ type: ApiErrorResponse, description: '`conflict`' })
  delete(@CurrentActor() actor: Actor, @Param('name') name: string): Promise<void> {
    return this.groups.delete(actor, groupName(name));
  }
}
