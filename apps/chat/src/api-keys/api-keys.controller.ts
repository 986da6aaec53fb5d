import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { IntIdPipe } from '../common/id.pipes.js';
import {
  ApiKeyPageResponse,
  ApiKeyResponse,
  CreateApiKeyDto,
  ListApiKeysQuery,
  UpdateApiKeyDto,
} from './api-keys.dto.js';
import { ApiKeysService } from './api-keys.service.js';

@ApiTags('admin: API keys')
@ApiBearerAuth()
@Controller('api/admin/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Get()
  @ApiResponse({ status: 200, type: ApiKeyPageResponse })
  list(@Query() query: ListApiKeysQuery): Promise<ApiKeyPageResponse> {
    return this.apiKeys.list(query.purpose);
  }

  @Get(':id')
  @ApiResponse({ status: 200, type: ApiKeyResponse })
  get(@Param('id', IntIdPipe) id: number): Promise<ApiKeyResponse> {
    return this.apiKeys.get(id);
  }

  @Post()
  @ApiResponse({ status: 201, type: ApiKeyResponse })
  create(@Body() dto: CreateApiKeyDto): Promise<ApiKeyResponse> {
    return this.apiKeys.create(dto);
  }

  @Patch(':id')
  @ApiResponse({ status: 200, type: ApiKeyResponse })
  update(
    @Param('id', IntIdPipe) id: number,
    @Body() dto: UpdateApiKeyDto,
  ): Promise<ApiKeyResponse> {
    return this.apiKeys.update(id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  remove(@Param('id', IntIdPipe) id: number): Promise<void> {
    return this.apiKeys.remove(id);
  }
}
