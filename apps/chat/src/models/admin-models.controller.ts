import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { IntIdPipe } from '../common/id.pipes.js';
import { CreateModelDto, ModelPageResponse, ModelResponse, UpdateModelDto } from './models.dto.js';
import { ModelsService } from './models.service.js';

@ApiTags('admin: models')
@ApiBearerAuth()
@Controller('api/admin/models')
export class AdminModelsController {
  constructor(private readonly models: ModelsService) {}

  @Get()
  @ApiResponse({ status: 200, type: ModelPageResponse })
  list(): Promise<ModelPageResponse> {
    return this.models.list();
  }

  @Post()
  @ApiResponse({ status: 201, type: ModelResponse })
  create(@Body() dto: CreateModelDto): Promise<ModelResponse> {
    return this.models.create(dto);
  }

  @Patch(':id')
  @ApiResponse({ status: 200, type: ModelResponse })
  update(@Param('id', IntIdPipe) id: number, @Body() dto: UpdateModelDto): Promise<ModelResponse> {
    return this.models.update(id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  remove(@Param('id', IntIdPipe) id: number): Promise<void> {
    return this.models.remove(id);
  }
}
