import { Module } from '@nestjs/common';
import { A2aAgentsController } from './a2a-agents.controller.js';
import { A2aAgentsRepository } from './a2a-agents.repository.js';
import { A2aAgentsService } from './a2a-agents.service.js';

/** Remote A2A agents, offered to tool-using models as delegate tools. */
@Module({
  controllers: [A2aAgentsController],
  providers: [A2aAgentsRepository, A2aAgentsService],
  exports: [A2aAgentsService],
})
export class A2aAgentsModule {}
