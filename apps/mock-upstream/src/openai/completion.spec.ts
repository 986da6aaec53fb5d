import type { ChatCompletionRequest, ChatMessage } from '@switchyard/contracts';
import { answer } from './completion.js';

const forecastTool = {
  type: 'function' as const,
  function: {
    name: 'weather__get_forecast',
    parameters: {
      type: 'object',
      properties: { address: { type: 'string' } },
      required: ['address'],
    },
  },
};
const otherTool = {
  type: 'function' as const,
  function: { name: 'clock__now', parameters: { type: 'object', properties: {} } },
};

function request(messages: ChatMessage[], extra: Partial<ChatCompletionRequest> = {}) {
  return { model: 'gpt-4o', messages, ...extra } as ChatCompletionRequest;
}

const PROMPT = [
  'To call a tool, answer with <use_mcp_tool>…</use_mcp_tool>',
  '### Tool `get_forecast` on server `weather`',
  '### Resource `weather://cities` on server `weather`',
].join('\n');

describe('tool use by the mock model', () => {
  it('calls the tool named in the last user message with the JSON given there', () => {
    const result = answer(
      request([{ role: 'user', content: 'use get_forecast {"address": "1 Main St"}' }], {
        tools: [otherTool, forecastTool],
      }),
    );
    expect(result.kind).toBe('tool_call');
    if (result.kind !== 'tool_call') return;
    expect(result.call.function).toEqual({
      name: 'weather__get_forecast',
      arguments: '{"address": "1 Main St"}',
    });
  });

  it('answers quoting the tool result, unless told to call repeatedly', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'get_forecast {"address": "x"}' },
      { role: 'assistant', content: null, tool_calls: [] },
      { role: 'tool', tool_call_id: 'c1', content: 'Sunny, 21 C' },
    ];
    expect(answer(request(messages, { tools: [forecastTool] }))).toEqual({
      kind: 'text',
      content: 'The tool answered: Sunny, 21 C',
    });
    messages[0] = { role: 'user', content: 'call get_forecast {"address": "x"} repeatedly' };
    expect(answer(request(messages, { tools: [forecastTool] })).kind).toBe('tool_call');
  });

  it('writes the command when the tools are described in the prompt, then quotes the result', () => {
    const asked = answer(
      request([
        { role: 'system', content: PROMPT },
        { role: 'user', content: 'please get_forecast {"address": "2 High St"}' },
      ]),
    );
    expect(asked.kind === 'text' && asked.content).toContain(
      '<use_mcp_tool>\n<server_name>weather</server_name>\n<tool_name>get_forecast</tool_name>\n<arguments>{"address": "2 High St"}</arguments>\n</use_mcp_tool>',
    );
    const resource = answer(
      request([
        { role: 'system', content: PROMPT },
        { role: 'user', content: 'read weather://cities' },
      ]),
    );
    expect(resource.kind === 'text' && resource.content).toContain(
      '<access_mcp_resource>\n<server_name>weather</server_name>\n<uri>weather://cities</uri>',
    );
    const quoted = answer(
      request([
        { role: 'system', content: PROMPT },
        { role: 'user', content: 'please get_forecast {"address": "2 High St"}' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: "[use_mcp_tool for 'weather/get_forecast'] Result:\nRain" },
      ]),
    );
    expect(quoted).toEqual({ kind: 'text', content: 'The tool answered: Rain' });
  });

  it('echoes when the prompt describes no tools', () => {
    expect(answer(request([{ role: 'user', content: 'get_forecast' }]))).toEqual({
      kind: 'text',
      content: 'Echo: get_forecast',
    });
  });
});
