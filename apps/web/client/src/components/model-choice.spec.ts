import { type ChatModel } from '../api/types.js';
import { customModels, initialModel } from './model-choice.js';

const model = (name: string, purpose: ChatModel['purpose']): ChatModel => ({
  id: name,
  name,
  purpose,
  platform: 'openai',
});

describe('initialModel', () => {
  const models = [model('dall-e-3', 'drawing'), model('gpt-4o', 'chat'), model('suno', 'music')];

  it("preselects the user's last choice while it is still offered", () => {
    expect(initialModel(models, 'suno')).toBe('suno');
  });

  it('falls back to the first chat model, never a drawing model that sorts first', () => {
    expect(initialModel(models, null)).toBe('gpt-4o');
    expect(initialModel(models, 'withdrawn-model')).toBe('gpt-4o');
  });

  it('takes what there is when no chat model is offered, and nothing from nothing', () => {
    expect(initialModel([model('dall-e-3', 'drawing')], null)).toBe('dall-e-3');
    expect(initialModel([], 'gpt-4o')).toBe('');
  });
});

describe('customModels', () => {
  it('lists saved custom assistants as chat models marked custom', () => {
    expect(customModels(['gpt-4-gizmo-g-1'])).toEqual([
      {
        id: 'custom:gpt-4-gizmo-g-1',
        name: 'gpt-4-gizmo-g-1',
        purpose: 'chat',
        platform: 'openai',
        custom: true,
      },
    ]);
  });
});
