import { Module } from '@nestjs/common';
import { AttachmentStore, PostgresAttachmentStore } from './attachment-store.js';
import { AttachmentsController } from './attachments.controller.js';
import { AttachmentsRepository } from './attachments.repository.js';
import { AttachmentsService } from './attachments.service.js';

@Module({
  controllers: [AttachmentsController],
  providers: [
    AttachmentsRepository,
    AttachmentsService,
    { provide: AttachmentStore, useClass: PostgresAttachmentStore },
  ],
  exports: [AttachmentsService],
})
export class AttachmentsModule {}
