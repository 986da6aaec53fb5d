import { conversationAsMarkdown, exportFileName } from './conversation-export.js';

describe('conversationAsMarkdown', () => {
  it('writes each message under who said it, with images as image links', () => {
    expect(
      conversationAsMarkdown('Trip plans', [
        { role: 'user', content: 'Draw a **cat**', images: [] },
        {
          role: 'assistant',
          model: 'dall-e-3',
          content: '',
          images: ['https://img.example/cat.png'],
        },
        { role: 'assistant', content: '```js\nx()\n```', images: [] },
      ]),
    ).toBe(
      [
        '# Trip plans',
        '## You',
        'Draw a **cat**',
        '## Assistant (dall-e-3)',
        '![Image 1](https://img.example/cat.png)',
        '## Assistant',
        '```js\nx()\n```',
      ].join('\n\n') + '\n',
    );
  });
});

describe('conversationAsMarkdown with attached images', () => {
  it('names each attached image, its type and size, without an address that needs a session', () => {
    const markdown = conversationAsMarkdown('Photo', [
      {
        role: 'user',
        content: 'What bird is this?',
        images: [],
        attachments: [
          {
            id: 'a1',
            mediaType: 'image/jpeg',
            byteSize: 1.5 * 1024 * 1024,
            url: '/api/attachments/a1',
          },
          { id: 'a2', mediaType: 'image/png', byteSize: 2048, url: '/api/attachments/a2' },
        ],
      },
    ]);
    expect(markdown).toBe(
      [
        '# Photo',
        '## You',
        'What bird is this?',
        '*Attached image 1: JPEG, 1.5 MiB (kept in Switchyard, not in this file)*',
        '*Attached image 2: PNG, 2 KiB (kept in Switchyard, not in this file)*',
      ].join('\n\n') + '\n',
    );
    expect(markdown).not.toContain('/api/attachments');
  });
});

describe('exportFileName', () => {
  it('keeps letters and digits of any script, and never comes out empty', () => {
    expect(exportFileName('Trip plans: Köln / 2026!')).toBe('trip-plans-köln-2026.md');
    expect(exportFileName('///')).toBe('conversation.md');
  });
});
