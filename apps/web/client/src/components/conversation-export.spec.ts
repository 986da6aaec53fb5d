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

describe('exportFileName', () => {
  it('keeps letters and digits of any script, and never comes out empty', () => {
    expect(exportFileName('Trip plans: Köln / 2026!')).toBe('trip-plans-köln-2026.md');
    expect(exportFileName('///')).toBe('conversation.md');
  });
});
