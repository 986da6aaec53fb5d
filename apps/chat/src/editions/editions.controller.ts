import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ActivateLicenseDto, EditionResponse } from './editions.dto.js';
import { EditionsService } from './editions.service.js';

@ApiTags('admin: edition')
@ApiBearerAuth()
@Controller('api/admin/edition')
export class EditionsController {
  constructor(private readonly editions: EditionsService) {}

  @Get()
  @ApiResponse({ status: 200, type: EditionResponse })
  view(): Promise<EditionResponse> {
    return this.editions.view();
  }

  @Post('activate')
  @HttpCode(200)
  @ApiResponse({ status: 200, type: EditionResponse })
  activate(@Body() dto: ActivateLicenseDto): Promise<EditionResponse> {
    return this.editions.activate(dto.license);
  }
}
