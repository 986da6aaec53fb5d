import {
  chatInputTexts,
  inputText,
  messagesInputTexts,
  responsesInputTexts,
} from './input-texts.js';

// A provider bills what its model reads: a 17 KB tool definition was once billed as the
// four tokens of the message beside it.
const tool = {
  name: 'lookup',
  description: 'Looks a word up. '.repeat(1_000),
  parameters: { type: 'object', properties: { word: { type: 'string' } } },
};

describe('chatInputTexts', () => {
  it('reads messages, tool calls, tool results and tool definitions', () => {
    const tools = [{ type: 'function', function: tool }];
    const texts = chatInputTexts({
      model: 'm',
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look up "tide"' },
            { type: 'image_url', image_url: { url: 'https://example.com/x.png' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'lookup', arguments: '{"word":"tide"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'the rise and fall of the sea' },
      ],
      tools,
    });
    expect(texts).toEqual([
      'be brief',
      'look up "tide"',
      'lookup{"word":"tide"}',
      'the rise and fall of the sea',
      JSON.stringify(tools),
    ]);
  });

  it('reads the legacy function call and functions', () => {
    expect(
      chatInputTexts({
        messages: [{ role: 'assistant', function_call: { name: 'f', arguments: '{}' } }],
        functions: [tool],
      }),
    ).toEqual(['f{}', JSON.stringify([tool])]);
  });
});

describe('responsesInputTexts', () => {
  it('reads instructions, input_text parts, function calls and outputs, and tools', () => {
    const tools = [{ type: 'function', ...tool }];
    const texts = responsesInputTexts({
      model: 'm',
      instructions: 'be brief',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'look up "tide"' }] },
        { role: 'assistant', content: [{ type: 'output_text', text: 'looking' }] },
        { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{"word":"tide"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'the rise and fall of the sea' },
        { role: 'user', content: 'thanks' },
      ],
      tools,
    });
    expect(texts).toEqual([
      'be brief',
      'look up "tide"',
      'looking',
      'lookup{"word":"tide"}',
      'the rise and fall of the sea',
      'thanks',
      JSON.stringify(tools),
    ]);
    expect(responsesInputTexts({ input: 'plain' })).toEqual(['plain']);
  });
});

describe('messagesInputTexts', () => {
  it('reads the system prompt, text blocks, tool uses and results, and tools', () => {
    const tools = [
      { name: tool.name, description: tool.description, input_schema: tool.parameters },
    ];
    const texts = messagesInputTexts({
      model: 'm',
      system: [{ type: 'text', text: 'be brief' }],
      messages: [
        { role: 'user', content: 'look up "tide"' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 't1', name: 'lookup', input: { word: 'tide' } }],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [{ type: 'text', text: 'the sea' }],
            },
            { type: 'tool_result', tool_use_id: 't2', content: 'a wave' },
          ],
        },
      ],
      tools,
    });
    expect(texts).toEqual([
      'be brief',
      'look up "tide"',
      'lookup{"word":"tide"}',
      'the sea',
      'a wave',
      JSON.stringify(tools),
    ]);
  });
});

describe('inputText', () => {
  it('reads nothing from what is not of the expected shape, and never throws', () => {
    const odd = {
      messages: [null, 3, { content: 7 }, { content: [null, { text: 1 }] }],
      input: {},
      system: 5,
      tools: 'x',
    };
    for (const api of ['chat.completions', 'responses', 'messages'] as const)
      expect(inputText(api, odd)).toBe('');
  });

  it('joins the texts with newlines', () => {
    expect(inputText('messages', { system: 'a', messages: [{ role: 'user', content: 'b' }] })).toBe(
      'a\nb',
    );
  });
});
