import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentUser, type Principal } from '../auth/principal.js';
import { FromLinkDto, FromLinkResponse, VisibleModelPageResponse } from './models.dto.js';
import { ModelsService } from './models.service.js';

@ApiTags('models')
@ApiBearerAuth()
@Controller('api/models')
export class ModelsController {
  constructor(private readonly models: ModelsService) {}

  /** Only models open to all or held in the user's permissions; others are simply absent. */
  @Get()
  @ApiResponse({ status: 200, type: VisibleModelPageResponse })
  list(@CurrentUser() principal: Principal): Promise<VisibleModelPageResponse> {
    return this.models.listVisible(principal);
  }

  /** A custom assistant's public link → its model name. */
  @Post('from-link')
  @HttpCode(200)
  @ApiResponse({ status: 200, type: FromLinkResponse })
  fromLink(@Body() dto: FromLinkDto): FromLinkResponse {
    return this.models.fromLink(dto.link);
  }
}
