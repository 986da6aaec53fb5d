import { contextUse, nearLimit } from './context-use.js';
import { type ShownMessage } from './MessageView.js';

const message = (
  role: 'user' | 'assistant',
  content: string,
  extra: Partial<ShownMessage> = {},
) => ({ key: content, role, content, images: [], ...extra });

describe('contextUse', () => {
  it('is unknown while the model has no context size', () => {
    expect(contextUse([message('user', 'hello')], null)).toBeNull();
    expect(contextUse([message('user', 'hello')], undefined)).toBeNull();
  });

  it('counts the conversation at four characters a token, plus the last tool definitions', () => {
    const use = contextUse(
      [
        message('user', 'x'.repeat(400)),
        message('assistant', 'y'.repeat(399), { toolDefinitionTokens: 50 }),
        message('user', 'z'.repeat(4)),
        message('assistant', 'w'.repeat(4), { toolDefinitionTokens: 20 }),
      ],
      1000,
    );
    expect(use).toEqual({ tokens: 202 + 20, limit: 1000, toolDefinitionTokens: 20 });
  });

  it('is near the limit from 80 % of the window on', () => {
    expect(nearLimit(contextUse([message('user', 'x'.repeat(316))], 100))).toBe(false);
    expect(nearLimit(contextUse([message('user', 'x'.repeat(320))], 100))).toBe(true);
    expect(nearLimit(null)).toBe(false);
  });
});
