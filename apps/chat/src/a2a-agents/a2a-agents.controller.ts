import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { IntIdPipe } from '../common/id.pipes.js';
import {
  A2aAgentPageResponse,
  A2aAgentResponse,
  CreateA2aAgentDto,
  UpdateA2aAgentDto,
} from './a2a-agents.dto.js';
import { A2aAgentsService } from './a2a-agents.service.js';

@ApiTags('admin: A2A agents')
@ApiBearerAuth()
@Controller('api/admin/a2a-agents')
export class A2aAgentsController {
  constructor(private readonly agents: A2aAgentsService) {}

  @Get()
  @ApiResponse({ status: 200, type: A2aAgentPageResponse })
  list(): Promise<A2aAgentPageResponse> {
    return this.agents.list();
  }

  @Get(':id')
  @ApiResponse({ status: 200, type: A2aAgentResponse })
  get(@Param('id', IntIdPipe) id: number): Promise<A2aAgentResponse> {
    return this.agents.get(id);
  }

  @Post()
  @ApiResponse({ status: 201, type: A2aAgentResponse })
  create(@Body() dto: CreateA2aAgentDto): Promise<A2aAgentResponse> {
    return this.agents.create(dto);
  }

  @Patch(':id')
  @ApiResponse({ status: 200, type: A2aAgentResponse })
  update(
    @Param('id', IntIdPipe) id: number,
    @Body() dto: UpdateA2aAgentDto,
  ): Promise<A2aAgentResponse> {
    return this.agents.update(id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  remove(@Param('id', IntIdPipe) id: number): Promise<void> {
    return this.agents.remove(id);
  }
}
