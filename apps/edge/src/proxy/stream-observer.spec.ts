import { StreamObserver, summarizeEvents, WholeEvents } from './stream-observer.js';

const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;

describe('StreamObserver', () => {
  it('finds the reported usage and the resolved model, whatever the chunk boundaries', () => {
    const text =
      event({
        model: 'gpt-4o-2024-08-06',
        choices: [{ delta: { role: 'assistant', content: '' } }],
      }) +
      event({ model: 'gpt-4o-2024-08-06', choices: [{ delta: { content: 'Hel' } }] }) +
      event({ model: 'gpt-4o-2024-08-06', choices: [{ delta: { content: 'lo' } }] }) +
      event({
        model: 'gpt-4o-2024-08-06',
        choices: [],
        usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
      }) +
      'data: [DONE]\n\n';
    const observer = new StreamObserver();
    for (let i = 0; i < text.length; i += 13) observer.see(Buffer.from(text.slice(i, i + 13)));
    expect(observer.summary()).toEqual({
      usage: { promptTokens: 7, completionTokens: 2 },
      model: 'gpt-4o-2024-08-06',
      // Metering counts text only when no usage came; with usage it is not collected.
      completionText: '',
    });
  });

  it('reads usage from the end of a stream longer than what it keeps of it', () => {
    const observer = new StreamObserver();
    const content = event({ model: 'm', choices: [{ delta: { content: 'x'.repeat(16_000) } }] });
    const middle = Buffer.from(content);
    for (let i = 0; i < 600; i++) observer.see(middle);
    observer.see(
      Buffer.from(event({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 600 } })),
    );
    observer.see(Buffer.from('data: [DONE]\n\n'));
    expect(observer.ended).toBe(true);
    expect(observer.summary()).toEqual({
      usage: { promptTokens: 1, completionTokens: 600 },
      model: 'm',
      completionText: '',
    });
  });

  it('reads a last event longer than the kilobyte looked at first, and the model from whole lines', () => {
    const observer = new StreamObserver();
    // The first chunk holds whole lines: the model is read from it alone.
    observer.see(Buffer.from(event({ model: 'first', choices: [] }) + 'data: {"model":"la'));
    observer.see(Buffer.from('ter","choices":[]}\n\n'));
    const usage = { prompt_tokens: 5, completion_tokens: 8, padding: 'p'.repeat(3_000) };
    observer.see(Buffer.from(event({ choices: [], usage })));
    observer.see(Buffer.from('data: [DONE]\n\n'));
    expect(observer.summary()).toEqual({
      usage: { promptTokens: 5, completionTokens: 8 },
      model: 'first',
      completionText: '',
    });
  });

  it('finds usage an earlier event reported when the last one did not', () => {
    const text =
      event({ model: 'm', choices: [{ delta: { content: 'Hi' } }] }) +
      event({ model: 'm', choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } }) +
      event({ model: 'm', choices: [{ delta: {}, finish_reason: 'stop' }] }) +
      'data: [DONE]\n\n';
    expect(summarizeEvents(text)).toEqual({
      usage: { promptTokens: 3, completionTokens: 1 },
      model: 'm',
      completionText: '',
    });
  });

  it("skips events of any other shape than OpenAI's chunks without failing", () => {
    const text =
      'data: null\n\n' +
      'data: 5\n\n' +
      event({ choices: 5 }) +
      event({ model: 7, choices: [null, { delta: 'x' }, { delta: { tool_calls: 'x' } }] }) +
      event({ choices: [{ delta: { tool_calls: [null, { function: { name: 3 } }] } }] }) +
      event({ model: 'm', choices: [{ delta: { content: 'ok', function_call: 'x' } }] }) +
      event({ usage: { prompt_tokens: 'many' } }) +
      'data: [DONE]\n\n';
    expect(summarizeEvents(text)).toEqual({ usage: null, model: 'm', completionText: 'ok' });
  });

  it('collects the text of content, tool calls and function calls when no usage came', () => {
    const observer = new StreamObserver();
    observer.see(Buffer.from(event({ model: 'm', choices: [{ delta: { content: 'a' } }] })));
    observer.see(
      Buffer.from(
        event({
          model: 'm',
          choices: [
            { delta: { tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] } },
          ],
        }),
      ),
    );
    observer.see(
      Buffer.from(
        event({
          model: 'm',
          choices: [{ delta: { function_call: { name: 'g', arguments: '[]' } } }],
        }),
      ),
    );
    observer.see(Buffer.from('data: {broken\n\n'));
    expect(observer.summary()).toEqual({ usage: null, model: 'm', completionText: 'af{}g[]' });
  });
});

describe('StreamObserver.ended', () => {
  it('is true only once the stream has ended with [DONE], however it was split', () => {
    const observer = new StreamObserver();
    observer.see(Buffer.from(event({ choices: [{ delta: { content: 'a' } }] })));
    expect(observer.ended).toBe(false);
    observer.see(Buffer.from('data: [DO'));
    expect(observer.ended).toBe(false);
    observer.see(Buffer.from('NE]\n\n'));
    expect(observer.ended).toBe(true);
  });

  it('reads past a long run of whitespace after [DONE]', () => {
    const observer = new StreamObserver();
    observer.see(Buffer.from(`data:[DONE]${'\n'.repeat(300)}`));
    expect(observer.ended).toBe(true);
    observer.see(Buffer.from('data: {}\n'));
    expect(observer.ended).toBe(false);
  });
});

describe('WholeEvents', () => {
  it('passes whole events at once and keeps back an unfinished one', () => {
    const events = new WholeEvents();
    expect(events.take(Buffer.from('data: 1\n\ndata: 2\n\n'))?.toString()).toBe(
      'data: 1\n\ndata: 2\n\n',
    );
    expect(events.rest).toBeNull();
    expect(events.take(Buffer.from('data: 3\n\ndata: {"cut'))?.toString()).toBe('data: 3\n\n');
    expect(events.take(Buffer.from('": 1}'))).toBeNull();
    expect(events.take(Buffer.from('\r\n\r\ndata: 5'))?.toString()).toBe(
      'data: {"cut": 1}\r\n\r\n',
    );
    expect(events.rest?.toString()).toBe('data: 5');
  });
});
