import { SseParser, readEvents, type SseEvent } from './sse.js';

describe('SseParser', () => {
  it('reads the named events of the chat stream', () => {
    const parser = new SseParser();
    const events = parser.push(
      'event: delta\ndata: {"content":"Hi"}\n\n' +
        'event: image\ndata: {"urls":["https://img.example/1.png"]}\n\n' +
        'event: done\ndata: {"messageId":5,"usage":{"promptTokens":1,"completionTokens":2}}\n\n',
    );
    expect(events).toEqual([
      { event: 'delta', data: '{"content":"Hi"}' },
      { event: 'image', data: '{"urls":["https://img.example/1.png"]}' },
      { event: 'done', data: '{"messageId":5,"usage":{"promptTokens":1,"completionTokens":2}}' },
    ]);
  });

  it('completes an event split anywhere across chunks', () => {
    const text =
      'event: delta\r\ndata: {"content":"a b"}\r\n\r\nevent: delta\ndata: {"content":"c"}\n\n';
    for (let cut = 1; cut < text.length; cut += 1) {
      const parser = new SseParser();
      const events = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut))];
      expect(events.map((e) => e.data)).toEqual(['{"content":"a b"}', '{"content":"c"}']);
    }
  });

  it('joins data lines, skips comments and defaults the event name', () => {
    const parser = new SseParser();
    expect(parser.push(': keep-alive\n\ndata: one\ndata: two\nid: 7\n\n')).toEqual([
      { event: 'message', data: 'one\ntwo', id: '7' },
    ]);
  });

  it('handles lone CR line ends and fields without a space', () => {
    const parser = new SseParser();
    expect(parser.push('event:error\rdata:{"code":"x"}\r\r')).toEqual([
      { event: 'error', data: '{"code":"x"}' },
    ]);
  });

  it('drops an unfinished event at the end of the stream', () => {
    const parser = new SseParser();
    expect(parser.push('event: delta\ndata: {"content":"cut')).toEqual([]);
    expect(parser.end()).toEqual([]);
  });
});

describe('readEvents', () => {
  it('yields events from a byte stream split inside a multi-byte character', async () => {
    const bytes = new TextEncoder().encode('event: delta\ndata: {"content":"héllo ✓"}\n\n');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 33));
        controller.enqueue(bytes.slice(33));
        controller.close();
      },
    });
    const events: SseEvent[] = [];
    for await (const event of readEvents(body)) events.push(event);
    expect(events).toEqual([{ event: 'delta', data: '{"content":"héllo ✓"}' }]);
  });
});
