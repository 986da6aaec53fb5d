import { assistantIdOf } from './assistant-link.js';

describe('assistantIdOf', () => {
  it.each([
    ['https://chatgpt.com/g/g-abc123XYZ-travel-guide?model=gpt-4', 'g-abc123XYZ-travel-guide'],
    ['https://chatgpt.com/g/g-abc123XYZ-travel-guide', 'g-abc123XYZ-travel-guide'],
    ['https://chatgpt.com/g/g-abc123XYZ/', 'g-abc123XYZ'],
    ['https://chat.openai.com/g/g-2fkFE8rbu-dall-e#top', 'g-2fkFE8rbu-dall-e'],
    ['  https://chatgpt.com/g/g-abc_1-x?x=1&y=/g/g-other  ', 'g-abc_1-x'],
    ['https://chatgpt.com/gpts/editor/x/g/g-nested', 'g-nested'],
  ])('takes the id from %s', (link, id) => {
    expect(assistantIdOf(link)).toEqual({ ok: true, id });
  });

  it.each([
    ['not a link', 'not a valid URL'],
    ['ftp://chatgpt.com/g/g-abc', 'https://'],
    ['https://chatgpt.com/gpts', 'no /g/ segment'],
    ['https://chatgpt.com/g/', 'no /g/ segment'],
    ['https://chatgpt.com/?g=g-abc', 'no /g/ segment'],
    ['https://chatgpt.com/g/abc123-travel', 'does not start with g-'],
    ['https://chatgpt.com/g/g-', 'only letters, digits'],
    ['https://chatgpt.com/g/g-a%20b', 'only letters, digits'],
  ])('refuses %s', (link, reason) => {
    const result = assistantIdOf(link);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toContain(reason);
  });
});
