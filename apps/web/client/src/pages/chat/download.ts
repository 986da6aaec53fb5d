import * as chat from '../../api/chat-api.js';
import { conversationAsMarkdown, exportFileName } from '../../components/conversation-export.js';

/** Saves the whole conversation, not only the pages on screen, as a Markdown file. */
export async function downloadConversation(conversationId: string, title: string): Promise<void> {
  const all = await chat.listMessages(conversationId);
  const blob = new Blob([conversationAsMarkdown(title, all)], { type: 'text/markdown' });
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = exportFileName(title);
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 0);
}
