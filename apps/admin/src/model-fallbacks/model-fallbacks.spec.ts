import { ApiError } from '@switchyard/contracts';
import { checkLists } from './model-fallbacks.service.js';

// The rules a model's fallback lists must follow (docs/routing.md, "Fallbacks across
// models"), each refusal naming the field it is about.

const channels = [['gpt-4o', 'gpt-4o-mini'], ['claude-*'], ['gemini-2.5-pro'], []];
const none = { contextWindow: [], contentPolicy: [] };

function refusal(run: () => void): { field: string; message: string } | undefined {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('validation_failed');
    return (error as ApiError).fields?.[0];
  }
  return undefined;
}

describe('checkLists', () => {
  it('accepts models channels serve, exactly or by a pattern, in any of the three lists', () => {
    expect(
      refusal(() =>
        checkLists(
          'gpt-4o',
          {
            fallbacks: ['claude-sonnet-4', 'gemini-2.5-pro'],
            contextWindow: ['gemini-2.5-pro'],
            contentPolicy: ['claude-sonnet-4'],
          },
          channels,
          [],
        ),
      ),
    ).toBeUndefined();
  });

  it.each([
    ['the model itself', 'gpt-4o', ['gpt-4o'], 'fallbacks[0]', /itself/],
    ['a model twice', 'gpt-4o', ['gpt-4o-mini', 'gpt-4o-mini'], 'fallbacks[1]', /repeats/],
    ['a model no channel serves', 'gpt-4o', ['gpt-5'], 'fallbacks[0]', /no channel serves/],
    ['lists for a model no channel serves', 'gpt-5', ['gpt-4o'], 'model', /no channel serves/],
  ])('refuses %s', (_name, model, fallbacks, field, message) => {
    const refused = refusal(() => checkLists(model, { fallbacks, ...none }, channels, []));
    expect(refused?.field).toBe(field);
    expect(refused?.message).toMatch(message);
  });

  it('refuses a list that leads back to its model through other models’ lists', () => {
    const stored = [
      { model: 'claude-sonnet-4', fallbacks: ['gemini-2.5-pro'], ...none },
      { model: 'gemini-2.5-pro', fallbacks: [], contextWindow: ['gpt-4o'], contentPolicy: [] },
    ];
    const refused = refusal(() =>
      checkLists(
        'gpt-4o',
        { fallbacks: ['gpt-4o-mini'], contextWindow: [], contentPolicy: ['claude-sonnet-4'] },
        channels,
        stored,
      ),
    );
    expect(refused).toEqual({
      field: 'contentPolicy[0]',
      message:
        'contentPolicy[0] ("claude-sonnet-4") loops back to "gpt-4o": gpt-4o → claude-sonnet-4 → gemini-2.5-pro → gpt-4o',
    });
  });

  it('judges a model’s new lists, not the ones they replace', () => {
    const stored = [
      { model: 'gpt-4o', fallbacks: ['claude-sonnet-4'], ...none },
      { model: 'gpt-4o-mini', fallbacks: ['gpt-4o'], ...none },
    ];
    // gpt-4o → claude was stored; claude → gpt-4o-mini → gpt-4o closes a loop.
    expect(
      refusal(() =>
        checkLists('claude-sonnet-4', { fallbacks: ['gpt-4o-mini'], ...none }, channels, stored),
      )?.field,
    ).toBe('fallbacks[0]');
    // gpt-4o's lists replaced by ones without claude: claude may now fall back to it.
    const replaced = [{ model: 'gpt-4o', fallbacks: ['gemini-2.5-pro'], ...none }];
    expect(
      refusal(() =>
        checkLists('claude-sonnet-4', { fallbacks: ['gpt-4o'], ...none }, channels, replaced),
      ),
    ).toBeUndefined();
  });
});
