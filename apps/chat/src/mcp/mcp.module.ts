import { Module } from '@nestjs/common';
import { AvailableMcpServersController, McpServersController } from './mcp-servers.controller.js';
import { McpServersRepository } from './mcp-servers.repository.js';
import { McpServersService } from './mcp-servers.service.js';

@Module({
  controllers: [McpServersController, AvailableMcpServersController],
  providers: [McpServersRepository, McpServersService],
  exports: [McpServersService],
})
export class McpModule {}
