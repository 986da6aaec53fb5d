import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { IntIdPipe } from '../common/id.pipes.js';
import {
  AvailableMcpServerPageResponse,
  CreateMcpServerDto,
  McpServerPageResponse,
  McpServerResponse,
  UpdateMcpServerDto,
} from './mcp-servers.dto.js';
import { McpServersService } from './mcp-servers.service.js';

@ApiTags('admin: MCP servers')
@ApiBearerAuth()
@Controller('api/admin/mcp-servers')
export class McpServersController {
  constructor(private readonly servers: McpServersService) {}

  @Get()
  @ApiResponse({ status: 200, type: McpServerPageResponse })
  list(): Promise<McpServerPageResponse> {
    return this.servers.list();
  }

  @Get(':id')
  @ApiResponse({ status: 200, type: McpServerResponse })
  get(@Param('id', IntIdPipe) id: number): Promise<McpServerResponse> {
    return this.servers.get(id);
  }

  @Post()
  @ApiResponse({ status: 201, type: McpServerResponse })
  create(@Body() dto: CreateMcpServerDto): Promise<McpServerResponse> {
    return this.servers.create(dto);
  }

  @Patch(':id')
  @ApiResponse({ status: 200, type: McpServerResponse })
  update(
    @Param('id', IntIdPipe) id: number,
    @Body() dto: UpdateMcpServerDto,
  ): Promise<McpServerResponse> {
    return this.servers.update(id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  remove(@Param('id', IntIdPipe) id: number): Promise<void> {
    return this.servers.remove(id);
  }
}

/** The servers a user may enable in a conversation. */
@ApiTags('MCP servers')
@ApiBearerAuth()
@Controller('api/mcp-servers')
export class AvailableMcpServersController {
  constructor(private readonly servers: McpServersService) {}

  @Get()
  @ApiResponse({ status: 200, type: AvailableMcpServerPageResponse })
  list(): Promise<AvailableMcpServerPageResponse> {
    return this.servers.listAvailable();
  }
}
