import { type Conversation } from '@switchyard/db';
import { toAttachment } from '../attachments/attachments.service.js';
import { type ConversationResponse, type MessageResponse } from './conversations.dto.js';
import { type MessageWithAttachments } from './conversations.repository.js';

export function toConversation(conversation: Conversation): ConversationResponse {
  return {
    id: conversation.id,
    title: conversation.title,
    model: conversation.model,
    mcpServerIds: conversation.mcpServerIds,
    createdAt: conversation.createdAt.toISOString(),
    updatedAt: conversation.updatedAt.toISOString(),
  };
}

export function toMessage(message: MessageWithAttachments): MessageResponse {
  return {
    id: Number(message.id),
    role: message.role,
    content: message.content,
    imageUrls: message.imageUrls,
    attachments: message.attachments.map(toAttachment),
    model: message.model,
    status: message.status,
    errorCode: message.errorCode,
    toolSteps: Array.isArray(message.toolSteps) ? (message.toolSteps as object[]) : [],
    usage: { promptTokens: message.promptTokens, completionTokens: message.completionTokens },
    createdAt: message.createdAt.toISOString(),
  };
}
